#include "runtime/kernel_executor.h"

#include <string>

#include "runtime/cpu_executor.h"
#include "runtime/cuda_executor.h"
#include "runtime/opencl_executor.h"

namespace ekb::runtime {

std::unique_ptr<KernelExecutor> make_executor(std::string_view backend, const std::string& private_dir,
                                              const DeviceSelection& device) {
  if (backend == "cpu") return std::make_unique<CpuExecutor>();
  if (backend == "cuda") return std::make_unique<CudaExecutor>();
  if (backend == "opencl") return std::make_unique<OpenCLExecutor>(private_dir, device);
  throw ExecutorError("no worker executor for backend '" + std::string(backend) + "'");
}

}  // namespace ekb::runtime
