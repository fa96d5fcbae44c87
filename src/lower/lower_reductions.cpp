#include "lower/lower_reductions.h"

#include "lir/mutator.h"

namespace ekb::lower {

using namespace lir;

namespace {

using ir::ReduceOp;

// What must run before a statement: accumulator declarations and the loops that fill them, in
// evaluation order. wrap() nests the statement inside them.
struct Prelude {
  struct Step {
    std::vector<std::tuple<std::string, ScalarType, ExprP>> decls;  // name, type, initial value
    StmtP compute;
  };
  std::vector<Step> steps;

  StmtP wrap(StmtP s) const {
    for (auto it = steps.rbegin(); it != steps.rend(); ++it) {
      s = make_block({it->compute, s});
      for (auto d = it->decls.rbegin(); d != it->decls.rend(); ++d)
        s = make_declare(std::get<0>(*d), std::get<1>(*d), std::get<2>(*d), s);
    }
    return s;
  }
};

ExprP conjunction(const std::vector<ExprP>& conds) {
  ExprP c;
  for (const ExprP& x : conds) c = c ? binary(BinOp::And, c, x) : x;
  return c;
}


class ReductionLowerer : public Mutator {
 public:
  explicit ReductionLowerer(Func& f) : f_(f) {}

  using Mutator::mutate;
  StmtP mutate(const StmtP& s) override {
    Prelude pre;
    auto n = std::make_shared<Stmt>(*s);
    auto hoist_all = [&](ExprP& e) {
      if (e) e = hoist(e, {}, pre);
    };
    // Expressions evaluated before the statement's own work, in evaluation order.
    hoist_all(n->min);
    hoist_all(n->extent);
    for (ExprP& i : n->indices) hoist_all(i);
    hoist_all(n->value);
    if (n->body) n->body = mutate(n->body);
    if (n->else_body) n->else_body = mutate(n->else_body);
    for (StmtP& b : n->stmts) b = mutate(b);
    StmtP out = n->kind == StmtKind::Block ? make_block(n->stmts) : StmtP(n);
    return pre.wrap(out);
  }

 private:
  // Rewrites e without Reduce nodes; their computations go to `pre`, each under `guard` (the
  // conditions under which the reference evaluates it).
  ExprP hoist(const ExprP& e, const std::vector<ExprP>& guard, Prelude& pre) {
    switch (e->kind) {
      case ExprKind::Reduce:
        return reduction(*e, guard, pre);
      case ExprKind::Select: {
        ExprP c = hoist(e->args[0], guard, pre);
        std::vector<ExprP> g_then = guard, g_else = guard;
        g_then.push_back(c);
        g_else.push_back(unary(UnOp::Not, c));
        return with_args(*e, {c, hoist(e->args[1], g_then, pre), hoist(e->args[2], g_else, pre)});
      }
      case ExprKind::Binary:
        if (e->bin_op == BinOp::And || e->bin_op == BinOp::Or) {
          ExprP a = hoist(e->args[0], guard, pre);
          std::vector<ExprP> g = guard;
          g.push_back(e->bin_op == BinOp::And ? a : unary(UnOp::Not, a));
          return with_args(*e, {a, hoist(e->args[1], g, pre)});
        }
        break;
      default:
        break;
    }
    bool changed = false;
    std::vector<ExprP> args;
    for (const ExprP& a : e->args) {
      args.push_back(hoist(a, guard, pre));
      changed |= args.back() != a;
    }
    ExprP pad = e->pad ? hoist(e->pad, guard, pre) : nullptr;
    changed |= pad != e->pad;
    if (!changed) return e;
    auto n = std::make_shared<Expr>(*e);
    n->args = std::move(args);
    n->pad = pad;
    return n;
  }

  ExprP reduction(const Expr& r, const std::vector<ExprP>& guard, Prelude& pre) {
    // Range bounds are evaluated outside the reduction, under the same guard.
    std::vector<Range> ranges = r.ranges;
    for (Range& rg : ranges) {
      rg.min = hoist(rg.min, guard, pre);
      rg.extent = hoist(rg.extent, guard, pre);
    }
    // The body is evaluated inside the innermost loop; reductions in it are computed there.
    Prelude inner;
    ExprP body = hoist(r.args[0], {}, inner);
    ScalarType bt = r.body_type;

    Prelude::Step step;
    StmtP update;
    ExprP result;
    if (r.reduce_op == ReduceOp::Argmax || r.reduce_op == ReduceOp::Argmin) {
      // First element unconditionally, later ones when strictly better: the first extreme index.
      const Range& rg = ranges.at(0);
      std::string best = f_.fresh_name(r.reduce_op == ReduceOp::Argmax ? "best_max" : "best_min");
      std::string at = f_.fresh_name(r.reduce_op == ReduceOp::Argmax ? "argmax" : "argmin");
      std::string v = f_.fresh_name("v");
      step.decls.emplace_back(best, bt, ir::is_float(bt) ? float_imm(bt, 0) : int_imm(bt, 0));
      step.decls.emplace_back(at, ScalarType::Index, rg.min);
      ExprP k = var(rg.var, ScalarType::Index);
      ExprP better =
          binary(r.reduce_op == ReduceOp::Argmax ? BinOp::Gt : BinOp::Lt, var(v, bt), var(best, bt));
      ExprP take = binary(BinOp::Or, binary(BinOp::Eq, k, rg.min), better);
      update =
          make_let(v, body, make_if(take, make_block({make_assign(best, var(v, bt)), make_assign(at, k)})));
      result = var(at, ScalarType::Index);
    } else {
      std::string acc = f_.fresh_name(std::string(ir::reduce_op_name(r.reduce_op)) + "_acc");
      BinOp op = r.reduce_op == ReduceOp::Sum    ? BinOp::Add
                 : r.reduce_op == ReduceOp::Prod ? BinOp::Mul
                 : r.reduce_op == ReduceOp::Max  ? BinOp::Max
                                                 : BinOp::Min;
      step.decls.emplace_back(acc, bt, combine_identity(op, bt));
      update = make_assign(acc, binary(op, var(acc, bt), body));
      result = var(acc, bt);
    }
    StmtP loops = inner.wrap(update);
    for (auto it = ranges.rbegin(); it != ranges.rend(); ++it)
      loops = make_for(it->var, it->min, it->extent, loops);
    if (!guard.empty()) loops = make_if(conjunction(guard), loops);
    step.compute = loops;
    pre.steps.push_back(std::move(step));
    return result;
  }

  Func& f_;
};

}  // namespace

void lower_reductions(Func& f) {
  ReductionLowerer r(f);
  f.body = r.mutate(f.body);
}

}  // namespace ekb::lower
