// Canonical printer: parse(print(m)) is structurally equal to m, and print is idempotent.
#pragma once
#include <string>

#include "ir/ast.h"

namespace ekb::ir {

std::string print_module(const Module& m);
std::string print_pattern(const Pattern& p);
std::string print_workload(const Workload& w);
std::string print_layer(const LayerBlock& b);
std::string print_directive(const Directive& d);  // "split(C, i, 8, io, ii)"
std::string print_expr(const Expr& e);
std::string print_stmt(const Stmt& s, int indent = 0);
std::string print_float(double v);  // shortest text that reads back as the same double, always float-looking

}  // namespace ekb::ir
