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

}  // namespace ekb::ir
