// The `cuda` backend: `.cu` solutions (a host `extern "C" ekb_main(..., cudaStream_t stream)`,
// docs/ABI.md) compiled by nvcc into a shared object that a worker loads and calls
// (runtime/cuda_executor.h):
//
//   nvcc -O3 -arch=sm_XX -std=c++17 -Xcompiler -fPIC -shared
//
// sm_XX is the device's compute capability, read from the driver (or $EKB_CUDA_ARCH / the options,
// which also lets a machine without a GPU compile). The arch and nvcc's version are part of the
// cache key. The driver is loaded at run time (runtime/cuda_driver.h), never linked.
#pragma once
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "runtime/backend.h"
#include "runtime/compile_cache.h"
#include "runtime/cuda_driver.h"

namespace ekb::runtime {

struct CudaBackendOptions {
  std::string nvcc;       // empty: $EKB_NVCC, else nvcc on the PATH, else $CUDA_HOME/bin/nvcc
  std::string arch;       // "sm_90"; empty: $EKB_CUDA_ARCH, else the device's
  std::string cache_dir;  // empty means default_cache_dir()
  double compile_timeout_s = 300;
  uint64_t compiler_memory_limit = 16ull << 30;
};

class CudaBackend final : public Backend {
 public:
  // Throws std::runtime_error saying why when no arch is given and there is no CUDA device.
  explicit CudaBackend(CudaBackendOptions options = {});
  ir::Target target() const override { return ir::Target::Cuda; }
  const DeviceInfo& device_info() override;
  CompileOutcome compile(const Source& source) override;
  bool accepts(Language l) const override { return l == Language::Cuda; }
  // None: the driver reserves address space for all of device and host memory at initialization.
  uint64_t worker_address_space_limit(uint64_t) const override { return 0; }

  const std::string& arch() const { return options_.arch; }
  // The flags every solution is compiled with (without nvcc, the source and output paths).
  std::vector<std::string> flags() const;
  // nvcc's release line ("Cuda compilation tools, release 13.0, V13.0.88"); throws if nvcc cannot run.
  const std::string& nvcc_version();

 private:
  CudaBackendOptions options_;
  std::optional<cuda::DeviceProperties> device_properties_;
  CompileCache cache_;
  std::mutex mutex_;  // guards the memoized fields below
  DeviceInfo device_;
  std::string nvcc_version_;
};

// nvcc as the options, $EKB_NVCC, the PATH or $CUDA_HOME/bin name it; empty if none is found.
std::string find_nvcc();

// The device name a cuda run records ("NVIDIA H200 (sm_90, 132 SMs, 139 GiB, driver 13.0)"), which
// is also the name its calibration is stored under (eval/cuda_calibration.h), so reports find it.
std::string cuda_device_name(const cuda::DeviceProperties& p);

}  // namespace ekb::runtime
