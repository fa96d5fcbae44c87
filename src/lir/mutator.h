// Traversal helpers shared by the passes: a rebuilding mutator (override mutate() for the node kinds
// a pass cares about and call the base for the rest), a read-only walk, finding a loop, and substitution.
#pragma once
#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "lir/loop_ir.h"

namespace ekb::lir {

class Mutator {
 public:
  virtual ~Mutator() = default;
  // Default: mutate the operands (and Reduce ranges, Load pads, statement bodies); the node is
  // rebuilt only when something below it changed.
  virtual ExprP mutate(const ExprP& e);
  virtual StmtP mutate(const StmtP& s);

 protected:
  ExprP mutate_children(const ExprP& e);
  StmtP mutate_children(const StmtP& s);
};

// Calls f on every expression node under e, operands before their parent (post-order).
void for_each_expr(const Expr& e, const std::function<void(const Expr&)>& f);
// Calls f on every expression node in s and the statements below it.
void for_each_expr(const Stmt& s, const std::function<void(const Expr&)>& f);
// Calls f on s and every statement below it (pre-order).
void for_each_stmt(const Stmt& s, const std::function<void(const Stmt&)>& f);

// The For of variable `var` under s, or nullptr.
const Stmt* find_loop(const Stmt& s, const std::string& var);

// Replaces the variable `name` by `value`. No capture to avoid: value's variables are bound around
// the place it is put, and no variable is bound again inside its own binding's scope (loop_ir.h).
ExprP substitute(const ExprP& e, const std::string& name, const ExprP& value);
StmtP substitute(const StmtP& s, const std::string& name, const ExprP& value);

bool uses_var(const Expr& e, const std::string& name);
bool uses_var(const Stmt& s, const std::string& name);  // in any expression under s
bool has_load(const Expr& e);
// The coefficient of `var` in an index expression affine in it (0 when it does not occur; integer
// casts keep the value), or nullopt when the expression is not affine in `var` (var / 2, a load at
// var, var * n, ...): a vector loop's lane stride, a cooperative copy's step.
std::optional<int64_t> coefficient_of(const Expr& e, const std::string& var);

}  // namespace ekb::lir
