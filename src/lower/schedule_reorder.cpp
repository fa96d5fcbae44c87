#include "lower/schedule_reorder.h"

#include <algorithm>
#include <map>

#include "lir/mutator.h"
#include "lower/materialize_reduction.h"
#include "lower/schedule_loops.h"

namespace ekb::lower {

using namespace lir;

namespace {

bool carried(LoopRole r) { return r == LoopRole::Ordered || r == LoopRole::Reduction; }

// Whether the innermost body is one associative, commutative accumulation step
// (`acc = acc op v` or `B[x] = B[x] op v`, op one of + * min max).
bool commutative_step(const Stmt& body) {
  const Expr* v = body.value.get();
  if (!v || v->kind != ExprKind::Binary) return false;
  if (v->bin_op != BinOp::Add && v->bin_op != BinOp::Mul && v->bin_op != BinOp::Min && v->bin_op != BinOp::Max)
    return false;
  const Expr& a = *v->args[0];
  if (body.kind == StmtKind::Assign) return a.kind == ExprKind::Var && a.name == body.name;
  if (body.kind != StmtKind::Store || a.kind != ExprKind::Load || a.name != body.name) return false;
  for (size_t i = 0; i < a.args.size(); ++i)
    if (!equal(a.args[i], body.indices[i])) return false;
  return true;
}

class Reorderer : public Mutator {
 public:
  Reorderer(Func& f, Stage& st, const std::vector<std::string>& order) : f_(f), st_(st), order_(order) {
    for (size_t i = 0; i < order.size(); ++i) {
      loop_named(st, order[i]);
      for (size_t j = 0; j < i; ++j)
        if (order[j] == order[i]) throw ScheduleError("loop '" + order[i] + "' is listed twice");
    }
    index_vars();
  }

  using Mutator::mutate;
  ExprP mutate(const ExprP& e) override { return e; }
  StmtP mutate(const StmtP& s) override {
    if (s->kind == StmtKind::For && rank_.count(s->name)) return reorder_nest(s);
    return mutate_children(s);
  }

 private:
  // Every copy of every listed loop, by variable.
  void index_vars() {
    rank_.clear();
    for (size_t i = 0; i < order_.size(); ++i) {
      const StageLoop& l = *st_.loop(order_[i]);
      for (const std::string& v : l.vars) rank_[v] = {i, &l};
    }
  }

  // One copy of the nest, rooted at its outermost listed loop.
  StmtP reorder_nest(const StmtP& top) {
    LoopChain c = loop_chain(top);
    std::vector<size_t> slots;
    size_t deepest_rank = 0;
    for (size_t i = 0; i < c.loops.size(); ++i)
      if (auto it = rank_.find(c.loops[i]->name); it != rank_.end()) {
        slots.push_back(i);
        deepest_rank = std::max(deepest_rank, it->second.first);
      }
    // A listed loop below the nest that must move above some loop of it.
    for (const auto& [v, info] : rank_) {
      if (info.first >= deepest_rank || c.position(v) >= 0 || !find_loop(*c.body, v)) continue;
      const StageLoop& l = *info.second;
      const std::string& above = order_[deepest_rank];
      if (l.role != LoopRole::Reduction)
        throw ScheduleError("loop '" + l.name + "' is not perfectly nested inside '" + above +
                                "' (other statements run between them), so reorder cannot move it outward",
                            "reorder loops before peeling, vectorizing or unrolling them");
      if (st_.is_update)
        throw ScheduleError("the reduction loop '" + l.name + "' belongs to update '" + st_.name +
                            "', whose statements run in order; it must stay inside '" + above + "'");
      StmtP nests = materialize_reduction(f_, st_, c, v);
      index_vars();  // the new nests' copies of the loops
      return mutate(nests);
    }
    std::vector<size_t> by_rank = slots;
    std::sort(by_rank.begin(), by_rank.end(),
              [&](size_t a, size_t b) { return rank_[c.loops[a]->name].first < rank_[c.loops[b]->name].first; });
    check_legal(c, slots, by_rank);
    LoopChain out = c;
    for (size_t i = 0; i < slots.size(); ++i) out.loops[slots[i]] = c.loops[by_rank[i]];
    check_bounds(out);
    out.body = mutate(c.body);  // listed loops further down (e.g. reduction loops among themselves)
    return out.build();
  }

  // Every pair of loops whose relative order flips must be free of dependences between them.
  void check_legal(const LoopChain& c, const std::vector<size_t>& before, const std::vector<size_t>& after) {
    auto where = [](const std::vector<size_t>& xs, size_t v) { return std::find(xs.begin(), xs.end(), v) - xs.begin(); };
    for (size_t a : before)
      for (size_t b : before) {
        if (a >= b || where(after, a) < where(after, b)) continue;
        const StageLoop& la = *rank_[c.loops[a]->name].second;
        const StageLoop& lb = *rank_[c.loops[b]->name].second;
        std::string why = pair_problem(c, a, la, b, lb);
        if (!why.empty())
          throw ScheduleError("reorder would move loop '" + lb.name + "' outside '" + la.name + "', but " + why);
      }
  }

  std::string pair_problem(const LoopChain& c, size_t a, const StageLoop& la, size_t b, const StageLoop& lb) {
    LoopRole ra = la.role, rb = lb.role;
    if (!carried(ra) && !carried(rb)) {
      if (ra == LoopRole::Pure && rb == LoopRole::Pure) return "";
      size_t free_loop = ra == LoopRole::Free ? a : b;
      std::string why = independence_problem(*c.loops[free_loop]);
      return why.empty() ? "" : "the iterations of '" + (ra == LoopRole::Free ? la : lb).name + "' depend on each other: " + why;
    }
    if (ra == LoopRole::Ordered && rb == LoopRole::Ordered)
      return "both are ordered loops of '" + st_.name + "': later iterations read what earlier ones wrote";
    if ((ra == LoopRole::Ordered && rb == LoopRole::Free) || (ra == LoopRole::Free && rb == LoopRole::Ordered)) {
      const StageLoop& free = ra == LoopRole::Free ? la : lb;
      std::string why = independence_problem(*c.loops[ra == LoopRole::Free ? a : b]);
      return why.empty() ? "" : "the free loop '" + free.name + "' carries a dependence: " + why;
    }
    if (ra == LoopRole::Reduction && rb == LoopRole::Reduction)
      return commutative_step(*c.body) ? ""
                                       : "the reduction keeps the first extreme index (argmax/argmin): its order matters";
    if ((ra == LoopRole::Reduction && rb == LoopRole::Pure) || (ra == LoopRole::Pure && rb == LoopRole::Reduction))
      return "";  // a materialized reduction: each element still accumulates in order
    return "'" + la.name + "' is " + std::string(loop_role_name(ra)) + " and '" + lb.name + "' " +
           std::string(loop_role_name(rb)) + ": the statement's order would change";
  }

  // A loop's bounds may only use variables of loops outside it.
  void check_bounds(const LoopChain& c) {
    for (size_t i = 0; i < c.loops.size(); ++i)
      for (size_t j = i + 1; j < c.loops.size(); ++j) {
        const std::string& inner = c.loops[j]->name;
        if (uses_var(*c.loops[i]->min, inner) || uses_var(*c.loops[i]->extent, inner)) {
          StageLoop* outer_loop = st_.loop_of_var(c.loops[i]->name);
          StageLoop* inner_loop = st_.loop_of_var(inner);
          throw ScheduleError("the bounds of loop '" + (outer_loop ? outer_loop->name : c.loops[i]->name) +
                              "' depend on loop '" + (inner_loop ? inner_loop->name : inner) +
                              "' (a triangular range), so it cannot move outside it");
        }
      }
  }

  Func& f_;
  Stage& st_;
  std::vector<std::string> order_;
  std::map<std::string, std::pair<size_t, const StageLoop*>> rank_;  // var -> (place in order, loop)
};

}  // namespace

void reorder(Func& f, const std::string& stage, const std::vector<std::string>& order) {
  Stage& st = stage_named(f, stage);
  Reorderer r(f, st, order);
  f.body = r.mutate(f.body);
}

}  // namespace ekb::lower
