// How each target (ir/target.h) spells a kernel: its source language, code fence and element types.
#pragma once
#include <string>
#include <string_view>

#include "ir/target.h"
#include "ir/types.h"

namespace ekb::codegen {

using ir::Target;  // the emitters name the targets they print for

std::string_view source_language(Target t);             // "C or C++", "CUDA C++", "OpenCL C"
std::string_view code_fence_language(Target t);         // "c", "cuda", "opencl"
// The element type as a solution declares its buffers (f16 is ekb_f16 on cpu, __half on cuda,
// half on opencl).
std::string element_type_name(ir::ScalarType t, Target target);

}  // namespace ekb::codegen
