// The kernel ABI of docs/ABI.md, generated from a bound workload: what a source solution must define.
#pragma once
#include <string>

#include "codegen/target.h"
#include "ir/instance.h"

namespace ekb::codegen {

// The declaration of the entry point: `void ekb_main(const float* x, float* y, int64_t R, ...)`
// for cpu; with device pointers and a trailing `cudaStream_t stream` for cuda; for opencl, the
// ordered list of kernel arguments a launch description refers to.
std::string kernel_signature(const ir::Instance& inst, Target target);

}  // namespace ekb::codegen
