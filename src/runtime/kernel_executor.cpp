#include "runtime/kernel_executor.h"

#include <string>

#include "runtime/cpu_executor.h"
#include "runtime/cuda_executor.h"
#include "runtime/opencl_executor.h"

namespace ekb::runtime {

std::unique_ptr<KernelExecutor> make_executor(ir::Target target, const std::string& private_dir,
                                              const DeviceSelection& device) {
  switch (target) {
    case ir::Target::Cpu: return std::make_unique<CpuExecutor>();
    case ir::Target::Cuda: return std::make_unique<CudaExecutor>();
    case ir::Target::OpenCL: return std::make_unique<OpenCLExecutor>(private_dir, device);
  }
  throw ExecutorError("no worker executor for this target");
}

}  // namespace ekb::runtime
