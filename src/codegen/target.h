// The backends a kernel can target, and how each spells the IR's element types.
#pragma once
#include <optional>
#include <string>
#include <string_view>

#include "ir/types.h"

namespace ekb::codegen {

enum class Target { Cpu, Cuda, OpenCL };

std::string_view target_name(Target t);                 // "cpu", "cuda", "opencl"
std::optional<Target> parse_target(std::string_view name);
std::string_view source_language(Target t);             // "C or C++", "CUDA C++", "OpenCL C"
std::string_view code_fence_language(Target t);         // "c", "cuda", "opencl"
// The element type as a solution declares its buffers (f16 is ekb_f16 on cpu, __half on cuda,
// half on opencl).
std::string element_type_name(ir::ScalarType t, Target target);

}  // namespace ekb::codegen
