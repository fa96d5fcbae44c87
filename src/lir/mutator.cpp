#include "lir/mutator.h"

namespace ekb::lir {

ExprP Mutator::mutate(const ExprP& e) { return mutate_children(e); }
StmtP Mutator::mutate(const StmtP& s) { return mutate_children(s); }

ExprP Mutator::mutate_children(const ExprP& e) {
  if (!e) return e;
  bool changed = false;
  auto sub = [&](const ExprP& x) {
    ExprP y = x ? mutate(x) : x;
    changed |= y != x;
    return y;
  };
  std::vector<ExprP> args;
  args.reserve(e->args.size());
  for (const auto& a : e->args) args.push_back(sub(a));
  ExprP pad = sub(e->pad);
  std::vector<Range> ranges = e->ranges;
  for (Range& r : ranges) {
    r.min = sub(r.min);
    r.extent = sub(r.extent);
  }
  if (!changed) return e;
  auto n = std::make_shared<Expr>(*e);
  n->args = std::move(args);
  n->pad = std::move(pad);
  n->ranges = std::move(ranges);
  return n;
}

StmtP Mutator::mutate_children(const StmtP& s) {
  if (!s) return s;
  bool changed = false;
  auto sub_e = [&](const ExprP& x) {
    ExprP y = x ? mutate(x) : x;
    changed |= y != x;
    return y;
  };
  auto sub_s = [&](const StmtP& x) {
    StmtP y = x ? mutate(x) : x;
    changed |= y != x;
    return y;
  };
  auto n = std::make_shared<Stmt>(*s);
  n->value = sub_e(s->value);
  for (auto& i : n->indices) i = sub_e(i);
  n->min = sub_e(s->min);
  n->extent = sub_e(s->extent);
  for (auto& x : n->launch.extents) x = sub_e(x);
  for (auto& x : n->cooperative.lane_indices) x = sub_e(x);
  n->body = sub_s(s->body);
  n->else_body = sub_s(s->else_body);
  for (auto& b : n->stmts) b = sub_s(b);
  if (!changed) return s;
  if (n->kind == StmtKind::Block) return make_block(n->stmts);
  return n;
}

void for_each_expr(const Expr& e, const std::function<void(const Expr&)>& f) {
  for (const auto& a : e.args) for_each_expr(*a, f);
  if (e.pad) for_each_expr(*e.pad, f);
  for (const Range& r : e.ranges) {
    for_each_expr(*r.min, f);
    for_each_expr(*r.extent, f);
  }
  f(e);
}

void for_each_stmt(const Stmt& s, const std::function<void(const Stmt&)>& f) {
  f(s);
  if (s.body) for_each_stmt(*s.body, f);
  if (s.else_body) for_each_stmt(*s.else_body, f);
  for (const auto& b : s.stmts) for_each_stmt(*b, f);
}

void for_each_expr(const Stmt& s, const std::function<void(const Expr&)>& f) {
  for_each_stmt(s, [&](const Stmt& t) {
    for (const ExprP* e : {&t.value, &t.min, &t.extent})
      if (*e) for_each_expr(**e, f);
    for (const auto& i : t.indices) for_each_expr(*i, f);
    for (const auto& x : t.launch.extents) for_each_expr(*x, f);
    for (const auto& x : t.cooperative.lane_indices) for_each_expr(*x, f);
  });
}

namespace {
class Substituter : public Mutator {
 public:
  Substituter(const std::string& n, const ExprP& v) : name_(n), value_(v) {}
  using Mutator::mutate;
  ExprP mutate(const ExprP& e) override {
    if (e->kind == ExprKind::Var && e->name == name_) return value_;
    return mutate_children(e);
  }

 private:
  const std::string& name_;
  const ExprP& value_;
};
}  // namespace

ExprP substitute(const ExprP& e, const std::string& name, const ExprP& value) {
  Substituter s(name, value);
  return s.mutate(e);
}

StmtP substitute(const StmtP& st, const std::string& name, const ExprP& value) {
  Substituter s(name, value);
  return s.mutate(st);
}

bool uses_var(const Expr& e, const std::string& name) {
  bool found = false;
  for_each_expr(e, [&](const Expr& x) { found |= x.kind == ExprKind::Var && x.name == name; });
  return found;
}

bool uses_var(const Stmt& s, const std::string& name) {
  bool found = false;
  for_each_expr(s, [&](const Expr& x) { found |= x.kind == ExprKind::Var && x.name == name; });
  return found;
}

std::optional<int64_t> coefficient_of(const Expr& e, const std::string& var) {
  if (!uses_var(e, var)) return 0;
  switch (e.kind) {
    case ExprKind::Var:
      return 1;  // it uses var, so it is var
    case ExprKind::Cast:
      // Between integer types of the index computation: the value is kept when it fits.
      if (!ir::is_float(e.type) && !ir::is_float(e.args[0]->type)) return coefficient_of(*e.args[0], var);
      return std::nullopt;
    case ExprKind::Binary: {
      auto a = coefficient_of(*e.args[0], var), b = coefficient_of(*e.args[1], var);
      if (!a || !b) return std::nullopt;
      if (e.bin_op == BinOp::Add) return *a + *b;
      if (e.bin_op == BinOp::Sub) return *a - *b;
      if (e.bin_op == BinOp::Mul) {
        const Expr& other = *a ? *e.args[1] : *e.args[0];
        if ((*a && *b) || other.kind != ExprKind::IntImm) return std::nullopt;
        return (*a ? *a : *b) * other.int_value;
      }
      return std::nullopt;
    }
    default:
      return std::nullopt;
  }
}

const Stmt* find_loop(const Stmt& s, const std::string& var) {
  const Stmt* found = nullptr;
  for_each_stmt(s, [&](const Stmt& x) {
    if (!found && x.kind == StmtKind::For && x.name == var) found = &x;
  });
  return found;
}

bool has_load(const Expr& e) {
  bool found = false;
  for_each_expr(e, [&](const Expr& x) { found |= x.kind == ExprKind::Load; });
  return found;
}

}  // namespace ekb::lir
