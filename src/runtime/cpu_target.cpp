#include "runtime/cpu_target.h"

#include <unistd.h>

#include <cctype>
#include <cstdlib>
#include <sstream>
#include <stdexcept>

namespace ekb::runtime {

namespace {

// `program` as found on $PATH, or `program` itself where it is not (the spawn then fails naming it).
std::string on_path(const std::string& program) {
  const char* path = std::getenv("PATH");
  std::istringstream dirs(path ? path : "");
  for (std::string dir; std::getline(dirs, dir, ':');)
    if (!dir.empty() && ::access((dir + "/" + program).c_str(), X_OK) == 0) return dir + "/" + program;
  return program;
}

struct CrossTarget {
  const char* name;    // what --target takes: the triple, with "+VECTOR" for a vector extension
  const char* triple;
  const char* arch;    // qemu's name for it
  // The ISA every board of the target has: the emitter's vectors are GCC vector extensions, which
  // clang lowers to NEON, to SVE or RVV at a fixed vector length, or to scalar code.
  std::vector<std::string> isa;
  // The CPU qemu emulates for it (empty: qemu's default), and what the device name says of it.
  std::vector<std::string> qemu_cpu;
  const char* vectors;
  // What a device must report to run the code (runtime/cpu_features.h): features and the fixed
  // vector length (0: none).
  std::vector<std::string> required_features = {};
  int sve_bits = 0;
  int rvv_bits = 0;
};

// Fixed-length SVE and RVV code is exact at its vector length only (a 512-bit SVE build computes
// wrong results on a 256-bit CPU), so the length is part of the target's name, and qemu emulates
// a CPU of that length.
const std::vector<CrossTarget>& cross_targets() {
  static const std::vector<CrossTarget> targets = {
      {"aarch64-linux-gnu", "aarch64-linux-gnu", "aarch64", {"-march=armv8-a"}, {}, "NEON", {"neon"}},
      {"aarch64-linux-gnu+sve256", "aarch64-linux-gnu", "aarch64", {"-march=armv8-a+sve", "-msve-vector-bits=256"},
       {"-cpu", "max,sve256=on"}, "SVE, 256-bit vectors", {"neon", "sve"}, 256},
      {"aarch64-linux-gnu+sve512", "aarch64-linux-gnu", "aarch64", {"-march=armv8-a+sve", "-msve-vector-bits=512"},
       {"-cpu", "max,sve512=on"}, "SVE, 512-bit vectors", {"neon", "sve"}, 512},
      {"riscv64-linux-gnu", "riscv64-linux-gnu", "riscv64", {"-march=rv64gc"}, {}, "no vectors"},
      {"riscv64-linux-gnu+rvv128", "riscv64-linux-gnu", "riscv64", {"-march=rv64gcv", "-mllvm", "-riscv-v-vector-bits-min=128"},
       {"-cpu", "rv64,v=true,vext_spec=v1.0,vlen=128"}, "RVV, VLEN 128", {"v"}, 0, 128},
      {"riscv64-linux-gnu+rvv256", "riscv64-linux-gnu", "riscv64", {"-march=rv64gcv", "-mllvm", "-riscv-v-vector-bits-min=256"},
       {"-cpu", "rv64,v=true,vext_spec=v1.0,vlen=256"}, "RVV, VLEN 256", {"v"}, 0, 256},
  };
  return targets;
}

}  // namespace

CpuTarget host_cpu_target() {
  CpuTarget t;
  t.system_triple = build_triple();
  // Vectorized libm calls (expf, logf, sinf... as glibc's libmvec SIMD variants) need calls that
  // do not set errno.
  t.compile_flags = {"-march=native", "-fopenmp", "-fPIC", "-shared", "-fno-math-errno", "-fveclib=libmvec"};
  // -z defs turns an undefined symbol into a compile error with the compiler's message instead of a
  // load failure later.
  t.libraries = {"-lmvec", "-lm", "-Wl,-z,defs"};
  return t;
}

CpuTarget cpu_target(std::string_view triple) {
  if (triple.empty() || triple == "host") return host_cpu_target();
  for (const CrossTarget& c : cross_targets()) {
    if (triple != c.name) continue;
    CpuTarget t;
    t.triple = c.name;
    t.system_triple = c.triple;
    t.required_features = c.required_features;
    t.sve_vector_bits = c.sve_bits;
    t.rvv_vector_bits = c.rvv_bits;
    t.compile_flags = {std::string("--target=") + c.triple};
    t.compile_flags.insert(t.compile_flags.end(), c.isa.begin(), c.isa.end());
    // No OpenMP: Debian has no libomp for these targets that the host's clang could link, and
    // -fopenmp=libgomp drops the pragmas silently. The kernels run on one thread, which the device
    // name says. No libmvec: glibc 2.36 has none for them.
    t.compile_flags.insert(t.compile_flags.end(), {"-fPIC", "-shared", "-fno-math-errno"});
    t.libraries = {"-lm", "-Wl,-z,defs"};
    std::string arch = c.arch;
    // Debian's qemu-user-static; the libraries of the target's C library from its cross package.
    t.worker_prefix = {on_path("qemu-" + arch + "-static")};
    t.worker_prefix.insert(t.worker_prefix.end(), c.qemu_cpu.begin(), c.qemu_cpu.end());
    t.worker_prefix.insert(t.worker_prefix.end(), {"-L", std::string("/usr/") + c.triple});
    std::string upper;
    for (char ch : arch) upper += static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
    const char* worker = std::getenv(("EKB_DEVICE_" + upper).c_str());
    t.worker_executable = worker && *worker ? worker : std::string(EKB_SOURCE_DIR) + "/build-" + c.triple + "/ekb-device";
    t.emulated = true;
    t.binutils_prefix = std::string(c.triple) + "-";
    t.device_name = std::string(c.triple) + " under qemu-" + arch + " (" + c.vectors + "; emulated, one thread)";
    return t;
  }
  std::string known;
  for (const CrossTarget& c : cross_targets()) known += std::string(known.empty() ? "" : ", ") + c.name;
  throw std::invalid_argument("unknown cpu target '" + std::string(triple) + "' (known: host, " + known + ")");
}

std::vector<std::string> cross_cpu_targets() {
  std::vector<std::string> out;
  for (const CrossTarget& c : cross_targets()) out.push_back(c.name);
  return out;
}

const char* build_triple() {
#if defined(__x86_64__)
  return "x86_64-linux-gnu";
#elif defined(__aarch64__)
  return "aarch64-linux-gnu";
#elif defined(__riscv) && __riscv_xlen == 64
  return "riscv64-linux-gnu";
#elif defined(__arm__)
  return "arm-linux-gnueabihf";
#elif defined(__i386__)
  return "i386-linux-gnu";
#else
  return "unknown";
#endif
}

}  // namespace ekb::runtime
