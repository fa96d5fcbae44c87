#include "lower/partition_loops.h"

#include <algorithm>
#include <functional>
#include <map>
#include <optional>

#include "lir/int_interval.h"
#include "lir/mutator.h"
#include "lir/simplify.h"
#include "lower/region.h"

namespace ekb::lower {

using namespace lir;

namespace {

// e as c * v + rest, c a constant; nullopt when v appears any other way.
struct Linear {
  int64_t coefficient = 0;
  ExprP rest;
};

std::optional<Linear> linear_in(const ExprP& e, const std::string& v) {
  if (!uses_var(*e, v)) return Linear{0, e};
  if (e->kind == ExprKind::Var) return Linear{1, index_imm(0)};
  if (e->kind != ExprKind::Binary) return std::nullopt;
  if (e->bin_op == BinOp::Add || e->bin_op == BinOp::Sub) {
    auto a = linear_in(e->args[0], v), b = linear_in(e->args[1], v);
    if (!a || !b) return std::nullopt;
    int64_t sign = e->bin_op == BinOp::Add ? 1 : -1;
    return Linear{a->coefficient + sign * b->coefficient, binary(e->bin_op, a->rest, b->rest)};
  }
  if (e->bin_op == BinOp::Mul) {
    for (int k = 0; k < 2; ++k) {
      const ExprP& factor = e->args[k];
      if (factor->kind != ExprKind::IntImm) continue;
      auto other = linear_in(e->args[1 - k], v);
      if (!other) return std::nullopt;
      return Linear{factor->int_value * other->coefficient, binary(BinOp::Mul, other->rest, factor)};
    }
  }
  return std::nullopt;
}

int64_t ceil_div(i128 a, i128 b) { return static_cast<int64_t>(-floor_div(-a, b)); }

// `s` with the variable `from` called `to`: its reads, the statements that bind it, assignments.
StmtP rename(const StmtP& s, const std::string& from, const std::string& to, ScalarType t) {
  StmtP r = substitute(s, from, var(to, t));
  std::function<StmtP(const StmtP&)> names = [&](const StmtP& x) -> StmtP {
    auto n = std::make_shared<Stmt>(*x);
    if ((n->kind == StmtKind::For || n->kind == StmtKind::LetStmt || n->kind == StmtKind::DeclareVar ||
         n->kind == StmtKind::Assign) && n->name == from)
      n->name = to;
    if (n->body) n->body = names(n->body);
    if (n->else_body) n->else_body = names(n->else_body);
    for (StmtP& b : n->stmts) b = names(b);
    return n;
  };
  return names(r);
}

// A copy of `s` in which every variable bound inside it has a fresh name: the edge copies of a
// partitioned loop sit beside the interior in one C scope once simplify inlines a loop of one
// iteration, and two `float sum_acc` there would not compile.
StmtP with_fresh_names(Func& f, const StmtP& s) {
  StmtP out = s;
  std::vector<std::pair<std::string, ScalarType>> bound;
  for_each_stmt(*s, [&](const Stmt& x) {
    if (x.kind == StmtKind::For) bound.emplace_back(x.name, ScalarType::Index);
    if (x.kind == StmtKind::LetStmt) bound.emplace_back(x.name, x.value->type);
    if (x.kind == StmtKind::DeclareVar) bound.emplace_back(x.name, x.type);
  });
  for (const auto& [name, type] : bound) out = rename(out, name, f.fresh_name(name), type);
  return out;
}

bool allocates(const Stmt& s) {
  bool found = false;
  for_each_stmt(s, [&](const Stmt& x) { found |= x.kind == StmtKind::Allocate; });
  return found;
}

class Partitioner {
 public:
  explicit Partitioner(Func& f) : f_(f), ranges_(loop_ranges(*f.body)) {}

  StmtP stmt(const StmtP& s, int depth) {
    switch (s->kind) {
      case StmtKind::For:
        return for_loop(s, depth);
      case StmtKind::Block: {
        std::vector<StmtP> out;
        for (const StmtP& b : s->stmts) out.push_back(stmt(b, depth));
        return make_block(std::move(out));
      }
      case StmtKind::LetStmt:
      case StmtKind::DeclareVar:
      case StmtKind::Allocate:
      case StmtKind::IfThenElse: {
        auto n = std::make_shared<Stmt>(*s);
        n->body = stmt(s->body, depth);
        if (s->else_body) n->else_body = stmt(s->else_body, depth);
        return n;
      }
      default:
        return s;
    }
  }

 private:
  StmtP for_loop(const StmtP& s, int depth) {
    auto whole = [&](int d) {
      auto n = std::make_shared<Stmt>(*s);
      n->body = stmt(s->body, d);
      return StmtP(n);
    };
    ExprP min = simplify(s->min), extent = simplify(s->extent);
    // A parallel loop's iterations are independent, so its parts may run one after the other: the
    // interior stays parallel, the edges (a row or two) run serially.
    const bool splittable = s->for_kind == ForKind::Serial || s->for_kind == ForKind::Parallel;
    if (!splittable || depth >= kMaxPartitionDepth || min->kind != ExprKind::IntImm ||
        extent->kind != ExprKind::IntImm || extent->int_value <= 1 || allocates(*s->body))
      return whole(depth);
    const int64_t first = min->int_value, last = first + extent->int_value - 1;
    auto inside = inside_range(*s->body, s->name);
    if (!inside) return whole(depth);
    int64_t lo = std::max(inside->lo, first), hi = std::min(inside->hi, last);
    if (lo > hi || (lo == first && hi == last)) return whole(depth);

    StmtP body = stmt(s->body, depth + 1);
    std::vector<StmtP> parts;
    // The edge loops get variables of their own (names stay unique in the function).
    auto part = [&](int64_t from, int64_t to, bool edge) {  // [from, to]
      if (from > to) return;
      auto n = std::make_shared<Stmt>(*s);
      n->min = index_imm(from);
      n->extent = index_imm(to - from + 1);
      n->body = body;
      if (edge) {
        n->for_kind = ForKind::Serial;
        n->name = f_.fresh_name(s->name);
        n->body = with_fresh_names(f_, substitute(body, s->name, var(n->name, ScalarType::Index)));
      }
      parts.push_back(n);
    };
    part(first, lo - 1, true);
    part(lo, hi, false);
    part(hi + 1, last, true);
    return make_block(std::move(parts));
  }

  // The values of v for which every boundary read under `body` whose index depends on v (as
  // c * v + r with r bounded) is inside its buffer; nullopt when no read constrains v.
  std::optional<IntInterval> inside_range(const Stmt& body, const std::string& v) const {
    IntInterval safe;
    bool constrained = false;
    for_each_expr(body, [&](const Expr& e) {
      if (e.kind != ExprKind::Load || e.boundary == ir::Boundary::None) return;
      const Buffer* b = f_.buffer(e.name);
      if (!b || b->shape.size() != e.args.size()) return;
      for (size_t d = 0; d < e.args.size(); ++d) {
        auto lin = linear_in(e.args[d], v);
        if (!lin || lin->coefficient == 0) continue;
        IntInterval r = value_range(lin->rest, ranges_);
        if (r.lo == INT64_MIN || r.hi == INT64_MAX) continue;  // unbounded: this read stays checked
        const i128 c = lin->coefficient, top = b->shape[d] - 1;
        // c * v + r within [0, top] for every r in [r.lo, r.hi].
        int64_t vlo, vhi;
        if (c > 0) {
          vlo = ceil_div(-i128(r.lo), c);
          vhi = static_cast<int64_t>(floor_div(top - r.hi, c));
        } else {
          vlo = ceil_div(i128(r.hi) - top, -c);
          vhi = static_cast<int64_t>(floor_div(r.lo, -c));
        }
        safe.lo = std::max(safe.lo, vlo);
        safe.hi = std::min(safe.hi, vhi);
        constrained = true;
      }
    });
    if (!constrained) return std::nullopt;
    return safe;
  }

  Func& f_;
  const std::map<std::string, IntInterval> ranges_;
};

}  // namespace

void partition_loops(Func& f) {
  Partitioner p(f);
  f.body = p.stmt(f.body, 0);
}

}  // namespace ekb::lower
