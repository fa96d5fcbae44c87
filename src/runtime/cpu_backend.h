// The `cpu` backend: C and C++ solutions compiled by clang into a shared object that a worker
// process loads with dlopen and calls (runtime/cpu_executor.h).
//
//   clang -O3 -march=native -fopenmp -fno-math-errno -fveclib=libmvec -fPIC -shared
//         -include <repo>/include/ekb/ekb_abi.h ... -lmvec -lm
//
// `-march=native` makes an artifact specific to the CPU, so the CPU model and feature flags are part
// of the cache key (a cache shared over NFS between machines stays correct). For a cross target
// (runtime/cpu_target.h) the flags are the target's and the key names the triple instead.
#pragma once
#include <mutex>
#include <string>
#include <vector>

#include "runtime/backend.h"
#include "runtime/compile_cache.h"
#include "runtime/compile_step.h"  // trim_compiler_log
#include "runtime/cpu_target.h"

namespace ekb::runtime {

struct CpuBackendOptions {
  std::string cc;         // C compiler: empty means $EKB_CC, else "clang"
  std::string cxx;        // C++ compiler: empty means $EKB_CXX, else "clang++"
  std::string cache_dir;  // empty means default_cache_dir()
  double compile_timeout_s = 120;
  uint64_t compiler_memory_limit = 8ull << 30;
  CpuTarget target = host_cpu_target();
};

class CpuBackend final : public Backend {
 public:
  explicit CpuBackend(CpuBackendOptions options = {});
  ir::Target target() const override { return ir::Target::Cpu; }
  const DeviceInfo& device_info() override;
  CompileOutcome compile(const Source& source) override;
  bool accepts(Language l) const override { return l == Language::C || l == Language::Cpp; }
  // Emulated: no limit, since qemu-user reserves the guest's whole address space up front.
  uint64_t worker_address_space_limit(uint64_t suggested) const override {
    return options_.target.emulated ? 0 : suggested;
  }
  WorkerLaunch worker_launch() const override {
    return {options_.target.worker_executable, options_.target.worker_prefix};
  }
  const CpuTarget& cpu_target() const { return options_.target; }

  // The flags every solution is compiled with (without the compiler, source and output paths).
  std::vector<std::string> flags(Language l) const;

  // For a library of kernels (`ekb package`, docs/DEVICES.md): the command that compiles a source
  // into a relocatable object with compile()'s flags, and the one that links C sources, objects
  // and archives into a program for the target (its libraries after them).
  std::vector<std::string> object_command(Language l, const std::string& source_path,
                                          const std::string& object_path) const;
  std::vector<std::string> program_command(const std::vector<std::string>& inputs, const std::string& program_path) const;
  // program_command's flags before its inputs (without the compiler).
  std::vector<std::string> program_flags() const;
  const std::string& c_compiler() const { return options_.cc; }
  // The C compiler's version line.
  const std::string& c_compiler_version() { return compiler_version(options_.cc); }

 private:
  const std::string& compiler_version(const std::string& compiler);

  CpuBackendOptions options_;
  std::string abi_header_;
  std::string abi_header_text_;
  std::string cpu_identity_;  // model name and feature flags (a cross target: its triple): part of every cache key
  CompileCache cache_;
  std::mutex mutex_;          // guards the memoized fields below
  DeviceInfo device_;
  std::vector<std::pair<std::string, std::string>> versions_;  // compiler -> version line
};

// "Intel(R) Xeon(R) ... (16 cores)" from /proc/cpuinfo, or "unknown cpu".
std::string cpu_model_name();

}  // namespace ekb::runtime
