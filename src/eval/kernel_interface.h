// The kernel ABI of one workload as the harness calls it (docs/ABI.md): input tensors, then output
// tensors, each in declaration order, then the int64 params in declaration order (then `scratch`
// when the solution declares it). codegen/signature.h prints the same order as C.
#pragma once
#include <cstdint>
#include <vector>

#include "ir/instance.h"

namespace ekb::eval {

struct KernelInterface {
  std::vector<const ir::TensorInstance*> inputs;
  std::vector<const ir::TensorInstance*> outputs;
  std::vector<int64_t> params;
  uint64_t tensor_bytes() const;  // inputs and outputs together
};

KernelInterface kernel_interface(const ir::Instance& inst);

}  // namespace ekb::eval
