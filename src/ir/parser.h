// Parser for .ekb files (docs/IR.md). Throws ParseError at the first syntax error.
#pragma once
#include <string>
#include <string_view>

#include "ir/ast.h"
#include "ir/diagnostics.h"  // ParseError

namespace ekb::ir {

Module parse_module(std::string_view text, const std::string& file = "<input>");

// Words that cannot name a tensor, param, let, type parameter or index variable.
bool is_reserved_word(std::string_view word);

// Names that the generated C, C++, CUDA or OpenCL code cannot use for a tensor, parameter or loop
// variable (keywords of those languages, and the ABI's own names such as `stream`, `scratch`).
bool is_target_reserved_name(std::string_view name);
// C library functions the generated kernels call; reserved for tensors, params and lets only.
bool is_target_library_name(std::string_view name);

}  // namespace ekb::ir
