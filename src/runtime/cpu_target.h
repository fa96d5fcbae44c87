// What the cpu backend compiles for, and how its workers run (docs/DEVICES.md, "Targets"):
//  - the host: clang -march=native with OpenMP and glibc's libmvec, workers started as `ekb worker`;
//  - a cross target (aarch64-linux-gnu, riscv64-linux-gnu): clang --target=TRIPLE against Debian's
//    cross toolchain, workers started as that target's ekb-device under qemu-user on this machine.
// Kernels of a cross target run emulated: correct or not is a real answer, their times are not
// speeds (the evaluator does not time them).
#pragma once
#include <string>
#include <string_view>
#include <vector>

namespace ekb::runtime {

struct CpuTarget {
  std::string triple;                       // empty: the host
  std::vector<std::string> compile_flags;   // after -x, -std and -O3; before -fPIC -shared
  std::vector<std::string> libraries;       // after the source
  // How a worker runs kernels of this target: an emulator command line (empty on the host) and the
  // worker program (empty: the evaluating ekb itself).
  std::vector<std::string> worker_prefix;
  std::string worker_executable;
  bool emulated = false;
  std::string device_name;                  // the results' device name ("" on the host: the CPU's)
  std::string binutils_prefix;              // of the target's objcopy and ar: "" or "TRIPLE-"
  // What a device must be to run its code (runtime/cpu_features.h, unmet_requirement): the triple
  // its ekb-device reports (the name without "+VECTORS"), the features it must report, and the
  // vector length the code is fixed to (0: none). The host's code needs the host's features
  // (-march=native), which unmet_requirement reads itself.
  std::string system_triple;
  std::vector<std::string> required_features;
  int sve_vector_bits = 0;
  int rvv_vector_bits = 0;

  bool is_host() const { return triple.empty(); }
};

// The host's target: today's flags, unchanged (the compile cache keys of host artifacts depend on
// them byte for byte).
CpuTarget host_cpu_target();
// The target named by a triple ("" and "host" name the host). Throws std::invalid_argument for a
// triple it does not know, naming those it does.
CpuTarget cpu_target(std::string_view triple);
// The cross targets cpu_target() knows.
std::vector<std::string> cross_cpu_targets();

// The triple this program was compiled for, from the compiler's macros ("x86_64-linux-gnu",
// "aarch64-linux-gnu", ...; "unknown"): what `ekb-device info` reports, and what a remote device
// without a `triple` must be.
const char* build_triple();

}  // namespace ekb::runtime
