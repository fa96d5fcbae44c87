// The `opencl` backend: `.cl` solutions (OpenCL C 1.2 kernels and a launch description, docs/ABI.md)
// built for one device of one OpenCL platform: PoCL on CPUs, a vendor's driver on GPUs.
//
// Compiling is clBuildProgram on that device, in a child process (`ekb opencl-compile`,
// runtime/opencl_program.h) that also checks the launch description against the workload's names
// and the program's kernels; a malformed description or a build error is a `compile` error whose
// message names the line. The artifact (program binary where the platform gives one, else the
// source) is cached by a content hash of the source, the workload's argument names, the build
// options and the device's identity (platform, device, driver version). Workers load it with the
// runtime/opencl_executor.h executor. The platform is loaded at run time (runtime/opencl_driver.h).
#pragma once
#include <mutex>
#include <string>

#include "runtime/backend.h"
#include "runtime/compile_cache.h"
#include "runtime/opencl_driver.h"

namespace ekb::runtime {

struct OpenCLBackendOptions {
  DeviceSelection device;          // empty platform: the first platform with a device
  std::string build_options;       // empty: opencl::default_build_options()
  std::string cache_dir;           // empty means default_cache_dir()
  double compile_timeout_s = 300;
  uint64_t compiler_memory_limit = 16ull << 30;  // on CPU devices only (see compile)
};

class OpenCLBackend final : public Backend {
 public:
  // Throws std::runtime_error saying why when there is no OpenCL platform or no such device.
  explicit OpenCLBackend(OpenCLBackendOptions options = {});
  ir::Target target() const override { return ir::Target::OpenCL; }
  const DeviceInfo& device_info() override { return info_; }
  CompileOutcome compile(const Source& source) override;
  bool accepts(Language l) const override { return l == Language::OpenCL; }
  // None: a GPU driver reserves address space for all of device and host memory, and OpenCL C
  // cannot allocate memory anyway.
  uint64_t worker_address_space_limit(uint64_t) const override { return 0; }
  // By the platform's full name, so that the workers find this very platform.
  DeviceSelection worker_device() const override { return {device_.platform_name, device_.index}; }

  const opencl::Device& device() const { return device_; }

 private:
  OpenCLBackendOptions options_;
  opencl::Device device_;
  DeviceInfo info_;
  CompileCache cache_;
};

}  // namespace ekb::runtime
