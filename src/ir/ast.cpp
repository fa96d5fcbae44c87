#include "ir/ast.h"

#include <cmath>
#include <cstring>

namespace ekb::ir {

const TensorDecl* Pattern::find_tensor(const std::string& n) const {
  for (const auto& t : tensors)
    if (t.name == n) return &t;
  return nullptr;
}

bool Workload::has_tag(const std::string& t) const {
  for (const auto& x : tags)
    if (x == t) return true;
  return false;
}

const Binding* Workload::find_binding(const std::string& n) const {
  for (const auto& b : bindings)
    if (b.name == n) return &b;
  return nullptr;
}

const Workload* Module::find_workload(const std::string& n) const {
  for (const auto& w : workloads)
    if (w.name == n) return &w;
  return nullptr;
}

namespace {

bool equal_ptr(const ExprP& a, const ExprP& b) {
  if (!a || !b) return !a && !b;
  return equal(*a, *b);
}

bool equal_exprs(const std::vector<ExprP>& a, const std::vector<ExprP>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (!equal_ptr(a[i], b[i])) return false;
  return true;
}

bool equal_ranges(const std::vector<Range>& a, const std::vector<Range>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (a[i].var != b[i].var || !equal_ptr(a[i].lo, b[i].lo) || !equal_ptr(a[i].hi, b[i].hi))
      return false;
  return true;
}

bool same_float(double a, double b) {
  // Bitwise, so that nan == nan and -0.0 != 0.0: the printer must preserve both.
  return std::memcmp(&a, &b, sizeof a) == 0 || (std::isnan(a) && std::isnan(b));
}

bool equal_args(const std::vector<DirectiveArg>& a, const std::vector<DirectiveArg>& b);

bool equal_arg(const DirectiveArg& a, const DirectiveArg& b) {
  return a.kind == b.kind && a.key == b.key && a.text == b.text && a.int_value == b.int_value &&
         equal_args(a.args, b.args);
}

bool equal_args(const std::vector<DirectiveArg>& a, const std::vector<DirectiveArg>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (!equal_arg(a[i], b[i])) return false;
  return true;
}

template <class T, class F>
bool equal_vec(const std::vector<T>& a, const std::vector<T>& b, F eq) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (!eq(a[i], b[i])) return false;
  return true;
}

}  // namespace

bool equal(const Expr& a, const Expr& b) {
  if (a.kind != b.kind) return false;
  switch (a.kind) {
    case ExprKind::IntLit: return a.int_value == b.int_value;
    case ExprKind::FloatLit: return same_float(a.float_value, b.float_value);
    case ExprKind::BoolLit: return a.bool_value == b.bool_value;
    case ExprKind::Name: return a.name == b.name;
    case ExprKind::Access:
      return a.name == b.name && a.boundary == b.boundary && equal_ptr(a.pad_value, b.pad_value) &&
             equal_exprs(a.args, b.args);
    case ExprKind::Unary: return a.unary_op == b.unary_op && equal_exprs(a.args, b.args);
    case ExprKind::Binary: return a.binary_op == b.binary_op && equal_exprs(a.args, b.args);
    case ExprKind::Call: return a.name == b.name && equal_exprs(a.args, b.args);
    case ExprKind::Cast:
      return a.saturating == b.saturating && a.cast_type.name == b.cast_type.name &&
             equal_exprs(a.args, b.args);
    case ExprKind::Reduce:
      return a.reduce_op == b.reduce_op && equal_ranges(a.ranges, b.ranges) &&
             equal_exprs(a.args, b.args);
  }
  return false;
}

bool equal(const Stmt& a, const Stmt& b) {
  if (a.kind != b.kind) return false;
  if (a.kind == StmtKind::Assign)
    return a.tensor == b.tensor && equal_exprs(a.indices, b.indices) && equal_ptr(a.value, b.value);
  return a.block == b.block && equal_ranges(a.ranges, b.ranges) &&
         equal_vec(a.body, b.body, [](const Stmt& x, const Stmt& y) { return equal(x, y); });
}

bool equal(const Module& a, const Module& b) {
  const Pattern& p = a.pattern;
  const Pattern& q = b.pattern;
  auto ident_eq = [](const Ident& x, const Ident& y) { return x.name == y.name; };
  auto let_eq = [](const LetDecl& x, const LetDecl& y) {
    return x.name == y.name && equal_ptr(x.value, y.value);
  };
  auto tensor_eq = [](const TensorDecl& x, const TensorDecl& y) {
    return x.role == y.role && x.name == y.name && x.type.name == y.type.name &&
           equal_exprs(x.shape, y.shape) && x.domain.kind == y.domain.kind &&
           equal_ptr(x.domain.lo, y.domain.lo) && equal_ptr(x.domain.hi, y.domain.hi);
  };
  auto stmt_eq = [](const Stmt& x, const Stmt& y) { return equal(x, y); };
  auto binding_eq = [](const Binding& x, const Binding& y) {
    return x.name == y.name && x.is_type == y.is_type && x.int_value == y.int_value &&
           x.type_name == y.type_name;
  };
  auto workload_eq = [&](const Workload& x, const Workload& y) {
    return x.name == y.name && x.tags == y.tags && equal_vec(x.bindings, y.bindings, binding_eq);
  };
  auto directive_eq = [](const Directive& x, const Directive& y) {
    return x.verb == y.verb && equal_args(x.args, y.args);
  };
  auto layer_eq = [&](const LayerBlock& x, const LayerBlock& y) {
    return x.kind == y.kind && x.target == y.target &&
           equal_vec(x.directives, y.directives, directive_eq);
  };
  return p.name == q.name && p.level == q.level && p.has_level == q.has_level &&
         p.source == q.source && p.summary == q.summary &&
         equal_vec(p.type_params, q.type_params, ident_eq) &&
         equal_vec(p.params, q.params, ident_eq) && equal_vec(p.lets, q.lets, let_eq) &&
         equal_vec(p.tensors, q.tensors, tensor_eq) && equal_vec(p.stmts, q.stmts, stmt_eq) &&
         equal_vec(a.workloads, b.workloads, workload_eq) &&
         equal_vec(a.layers, b.layers, layer_eq);
}

ExprP make_int(int64_t v, SourceLoc loc) {
  auto e = std::make_shared<Expr>();
  e->kind = ExprKind::IntLit;
  e->int_value = v;
  e->loc = loc;
  return e;
}

ExprP make_float(double v, SourceLoc loc) {
  auto e = std::make_shared<Expr>();
  e->kind = ExprKind::FloatLit;
  e->float_value = v;
  e->loc = loc;
  return e;
}

ExprP make_name(std::string n, SourceLoc loc) {
  auto e = std::make_shared<Expr>();
  e->kind = ExprKind::Name;
  e->name = std::move(n);
  e->loc = loc;
  return e;
}

const std::vector<std::string>& pattern_domains() {
  static const std::vector<std::string> domains = {"nn",       "qnn",      "img",         "audio",
                                                   "linalg",   "robotics", "transformer", "graph"};
  return domains;
}

std::string_view binary_op_text(BinaryOp op) {
  switch (op) {
    case BinaryOp::Or: return "||";
    case BinaryOp::And: return "&&";
    case BinaryOp::Eq: return "==";
    case BinaryOp::Ne: return "!=";
    case BinaryOp::Lt: return "<";
    case BinaryOp::Le: return "<=";
    case BinaryOp::Gt: return ">";
    case BinaryOp::Ge: return ">=";
    case BinaryOp::BitOr: return "|";
    case BinaryOp::BitXor: return "^";
    case BinaryOp::BitAnd: return "&";
    case BinaryOp::Shl: return "<<";
    case BinaryOp::Shr: return ">>";
    case BinaryOp::Add: return "+";
    case BinaryOp::Sub: return "-";
    case BinaryOp::Mul: return "*";
    case BinaryOp::Div: return "/";
    case BinaryOp::Mod: return "%";
  }
  return "?";
}

std::string_view reduce_op_name(ReduceOp op) {
  switch (op) {
    case ReduceOp::Sum: return "sum";
    case ReduceOp::Prod: return "prod";
    case ReduceOp::Max: return "max";
    case ReduceOp::Min: return "min";
    case ReduceOp::Argmax: return "argmax";
    case ReduceOp::Argmin: return "argmin";
  }
  return "?";
}

std::string_view boundary_name(Boundary b) {
  switch (b) {
    case Boundary::None: return "";
    case Boundary::Pad: return "pad";
    case Boundary::Edge: return "edge";
    case Boundary::Mirror: return "mirror";
  }
  return "?";
}

std::string_view level_name(Level l) {
  switch (l) {
    case Level::Operator: return "operator";
    case Level::Fused: return "fused";
    case Level::Graph: return "graph";
  }
  return "?";
}

std::string_view role_name(TensorRole r) {
  switch (r) {
    case TensorRole::Input: return "input";
    case TensorRole::Output: return "output";
    case TensorRole::Temp: return "temp";
  }
  return "?";
}

}  // namespace ekb::ir
