#include "lower/promote_to_f64.h"

#include "lir/mutator.h"

namespace ekb::lower {

using namespace lir;

namespace {

// Does computing e's float value in its own type round differently from f64?
bool has_float_arithmetic(const Expr& e) {
  bool found = false;
  for_each_expr(e, [&](const Expr& x) {
    if (!ir::is_float(x.type) || x.type == ScalarType::F64) return;
    if (x.kind == ExprKind::Unary || x.kind == ExprKind::Binary || x.kind == ExprKind::Call ||
        (x.kind == ExprKind::Cast && x.args[0]->type == ScalarType::F64))
      found = true;
  });
  return found;
}

// The float expression e, evaluated in f64 throughout.
ExprP in_f64(const ExprP& e) {
  switch (e->kind) {
    case ExprKind::FloatImm:
      return float_imm(ScalarType::F64, e->float_value);  // the literal itself
    case ExprKind::Unary:
      return unary(e->un_op, in_f64(e->args[0]));
    case ExprKind::Binary:
      if (!ir::is_float(e->type)) break;
      return binary(e->bin_op, in_f64(e->args[0]), in_f64(e->args[1]));
    case ExprKind::Select:
      return select(e->args[0], in_f64(e->args[1]), in_f64(e->args[2]));
    case ExprKind::Call: {
      std::vector<ExprP> args;
      for (const ExprP& a : e->args) args.push_back(in_f64(a));
      return call(e->intrinsic, ScalarType::F64, std::move(args));
    }
    case ExprKind::Cast: {
      const ExprP& v = e->args[0];
      if (ir::is_float(v->type)) return in_f64(v);  // float-to-float does not round in the reference
      return cast(ScalarType::F64, v);
    }
    default:
      break;
  }
  return e->type == ScalarType::F64 ? e : cast(ScalarType::F64, e);
}

bool sensitive(const ExprP& v) {
  return ir::is_float(v->type) && v->type != ScalarType::F64 && has_float_arithmetic(*v);
}

bool is_periodic(Intrinsic f) { return f == Intrinsic::Sin || f == Intrinsic::Cos || f == Intrinsic::Tan; }

class Promoter : public Mutator {
 public:
  using Mutator::mutate;
  ExprP mutate(const ExprP& e) override {
    ExprP m = mutate_children(e);
    switch (m->kind) {
      case ExprKind::Cast:  // to an integer or bool
        if (!ir::is_float(m->type) && sensitive(m->args[0])) return with_args(*m, {in_f64(m->args[0])});
        break;
      case ExprKind::Binary:
        if (is_comparison(m->bin_op) && (sensitive(m->args[0]) || sensitive(m->args[1])))
          return with_args(*m, {in_f64(m->args[0]), in_f64(m->args[1])});
        break;
      case ExprKind::Call:
        if (is_periodic(m->intrinsic) && m->type != ScalarType::F64 && sensitive(m->args[0]))
          return cast(m->type, call(m->intrinsic, ScalarType::F64, {in_f64(m->args[0])}));
        break;
      default:
        break;
    }
    return m;
  }
};

}  // namespace

void promote_to_f64(Func& f) {
  Promoter p;
  f.body = p.mutate(f.body);
}

}  // namespace ekb::lower
