// Expression typing (docs/IR.md "Types and rules"). Types are inferred bottom-up; literals (and
// float lets) stay *flexible* until an operand or the context gives them a type, then the whole
// flexible subtree adopts it (adopt), so expr_types records what each literal became. A flexible
// expression that nothing constrains takes its default: index for integers, f64 for floats.
#include <unordered_map>

#include "ir/verify_internal.h"

namespace ekb::ir::detail {

namespace {

enum class Flex : uint8_t { None, Int, Float };

struct Ty {
  ScalarType t = ScalarType::Index;
  Flex flex = Flex::None;
  bool bad = false;  // an error was reported below: report nothing more about this expression
};

Ty concrete(ScalarType t) { return {t, Flex::None, false}; }
Ty flexible(Flex f) { return {f == Flex::Float ? ScalarType::F64 : ScalarType::Index, f, false}; }
Ty bad() { return {ScalarType::Index, Flex::None, true}; }

std::string describe(const Ty& t) {
  if (t.flex == Flex::Int) return "an integer literal";
  if (t.flex == Flex::Float) return "a float constant";
  return type_text(t.t);
}

// Can a flexible expression of this kind take type t?
bool compatible(Flex f, ScalarType t) {
  if (f == Flex::Int) return t != ScalarType::Bool;
  if (f == Flex::Float) return is_float(t);
  return true;
}

// Two concrete operand types: equal, or an integer type with index (giving index).
std::optional<ScalarType> mix(ScalarType a, ScalarType b) {
  if (a == b) return a;
  if (a == ScalarType::Index && is_integer(b)) return a;
  if (b == ScalarType::Index && is_integer(a)) return b;
  return std::nullopt;
}

// The index type is int64, so storing an index value into an i64 tensor loses nothing.
bool assignable(ScalarType v, ScalarType elem) {
  return v == elem || (v == ScalarType::Index && elem == ScalarType::I64);
}

std::string mix_hint(const Ty& a, ScalarType b) {
  if (a.flex == Flex::Float) return "cast the integer operand to a float type, or write an integer literal";
  if (a.flex == Flex::Int) return "write true or false";
  if (a.t == ScalarType::Bool || b == ScalarType::Bool)
    return "turn the bool into a number with select(b, 1, 0)";
  if (is_float(a.t) != is_float(b)) {
    ScalarType f = is_float(a.t) ? a.t : b;
    return "cast the integer operand: cast(" + type_text(f) + ", ...)";
  }
  ScalarType wider = bit_width(a.t) >= bit_width(b) ? a.t : b;
  return "cast one operand, e.g. cast(" + type_text(wider) + ", ...)";
}

bool is_comparison(BinaryOp op) { return op >= BinaryOp::Eq && op <= BinaryOp::Ge; }
bool is_bitwise(BinaryOp op) { return op >= BinaryOp::BitOr && op <= BinaryOp::BitAnd; }
bool integer_only(BinaryOp op) {
  return op == BinaryOp::Mod || op == BinaryOp::Shl || op == BinaryOp::Shr || is_bitwise(op);
}

class Typer {
 public:
  Typer(Instance& inst, WorkloadDiags& d) : inst_(inst), diags_(d) {}

  Ty infer(const Expr& e) {
    switch (e.kind) {
      case ExprKind::IntLit: return record(e, flexible(Flex::Int));
      case ExprKind::FloatLit: return record(e, flexible(Flex::Float));
      case ExprKind::BoolLit: return record(e, concrete(ScalarType::Bool));
      case ExprKind::Name: {
        // Index variables and params are index; lets are index or a flexible float.
        auto let = inst_.lets.find(e.name);
        bool float_let = let != inst_.lets.end() && let->second.is_float;
        return record(e, float_let ? flexible(Flex::Float) : concrete(ScalarType::Index));
      }
      case ExprKind::Access: return infer_access(e);
      case ExprKind::Unary: return infer_unary(e);
      case ExprKind::Binary: return infer_binary(e);
      case ExprKind::Call: return infer_call(e);
      case ExprKind::Cast: return infer_cast(e);
      case ExprKind::Reduce: return infer_reduce(e);
    }
    return record(e, bad());
  }

  // Gives a flexible expression its final type: `want` when it can take it, else its default.
  Ty settle(const Expr& e, Ty ty, std::optional<ScalarType> want = std::nullopt) {
    if (ty.bad || ty.flex == Flex::None) return ty;
    ScalarType target = want && compatible(ty.flex, *want) ? *want : ty.t;
    adopt(e, target);
    return concrete(target);
  }

  // An integer-valued operand (index, range bound, extent); false after reporting.
  bool expect_integer(const Expr& e, const std::string& what) {
    Ty ty = infer(e);
    if (ty.bad) return false;
    if (ty.flex == Flex::Float || (ty.flex == Flex::None && !is_integer(ty.t))) {
      diags_.error(start_loc(e), what + " must be an integer, found " + describe(ty),
                   is_float(ty.t) ? "convert it with cast(i32, floor(...))" : "");
      return false;
    }
    settle(e, ty);
    return true;
  }

  // A value stored into (or padding) a tensor of type elem.
  void expect_value(const Expr& e, ScalarType elem, const std::string& what) {
    Ty ty = infer(e);
    if (ty.bad) return;
    if (ty.flex != Flex::None && !compatible(ty.flex, elem)) {
      diags_.error(start_loc(e), what + " must be " + type_text(elem) + ", found " + describe(ty),
                   elem == ScalarType::Bool ? "write true, false or a comparison"
                                            : "cast it: cast(" + type_text(elem) + ", ...)");
      return;
    }
    ty = settle(e, ty, elem);
    if (!assignable(ty.t, elem))
      diags_.error(start_loc(e), what + " must be " + type_text(elem) + ", found " + type_text(ty.t),
                   "cast it: cast(" + type_text(elem) + ", ...)");
  }

  // An input domain's bound: a number, an integer one for integer inputs.
  std::optional<Ty> expect_number(const Expr& e, ScalarType elem, const std::string& what) {
    Ty ty = infer(e);
    if (ty.bad) return std::nullopt;
    bool int_elem = !is_float(elem);
    if ((ty.flex == Flex::Float || (ty.flex == Flex::None && is_float(ty.t))) && int_elem) {
      diags_.error(start_loc(e), what + " must be an integer, found " + describe(ty),
                   "an integer input's domain has integer bounds");
      return std::nullopt;
    }
    if (ty.flex == Flex::None && ty.t == ScalarType::Bool) {
      diags_.error(start_loc(e), what + " must be a number, found bool");
      return std::nullopt;
    }
    // Integer literals stay index here so that an out-of-range bound gets the domain's message.
    return settle(e, ty, is_float(elem) ? std::optional(elem) : std::nullopt);
  }

  void type_stmt(const Stmt& s) {
    if (s.kind == StmtKind::For) {
      for (const auto& r : s.ranges) type_range(r);
      for (const auto& b : s.body) type_stmt(b);
      return;
    }
    const TensorInstance* t = inst_.tensor(s.tensor);
    for (size_t i = 0; i < s.indices.size(); ++i)
      if (s.indices[i]) expect_integer(*s.indices[i], "index " + std::to_string(i) + " of '" + s.tensor + "'");
    if (t && s.value) expect_value(*s.value, t->type, "the value assigned to '" + s.tensor + "'");
  }

  void type_range(const Range& r) {
    if (r.lo) expect_integer(*r.lo, "the start of range '" + r.var + "'");
    if (r.hi) expect_integer(*r.hi, "the end of range '" + r.var + "'");
  }

 private:
  Ty record(const Expr& e, Ty t) {
    inst_.expr_types[&e] = t.t;
    if (t.flex != Flex::None) flex_[&e] = t.flex;
    return t;
  }

  // A flexible subtree takes type t: literals, float lets and the operators built from them.
  void adopt(const Expr& e, ScalarType t) {
    auto it = flex_.find(&e);
    if (it == flex_.end()) return;
    flex_.erase(it);
    inst_.expr_types[&e] = t;
    switch (e.kind) {
      case ExprKind::IntLit:
        if (is_integer(t) && (e.int_value < int_min(t) || e.int_value > int_max(t)))
          diags_.error(e.loc, "integer literal " + std::to_string(e.int_value) + " does not fit in " +
                                  type_text(t),
                       "the " + type_text(t) + " range is [" + std::to_string(int_min(t)) + ", " +
                           std::to_string(int_max(t)) + "]");
        return;
      case ExprKind::Call:
        for (size_t i = e.name == "select" ? 1 : 0; i < e.args.size(); ++i)
          if (e.args[i]) adopt(*e.args[i], t);
        return;
      case ExprKind::Unary:
      case ExprKind::Binary:
      case ExprKind::Reduce:
        for (const auto& a : e.args)
          if (a) adopt(*a, t);
        return;
      default: return;
    }
  }

  // The common type of operands; flexible ones adopt a concrete common type.
  Ty unify(const Expr& e, const std::vector<const Expr*>& xs, const std::vector<Ty>& tys,
           const std::string& what) {
    std::optional<ScalarType> acc;
    Flex flex = Flex::None;
    for (const Ty& ty : tys) {
      if (ty.flex != Flex::None) {
        if (ty.flex == Flex::Float || flex == Flex::None) flex = ty.flex;
        continue;
      }
      if (!acc) {
        acc = ty.t;
        continue;
      }
      auto m = mix(*acc, ty.t);
      if (!m) {
        diags_.error(e.loc, "cannot mix " + type_text(*acc) + " and " + type_text(ty.t) + " in " + what,
                     mix_hint(concrete(*acc), ty.t));
        return bad();
      }
      acc = *m;
    }
    if (!acc) return flexible(flex);
    for (const Ty& ty : tys)
      if (ty.flex != Flex::None && !compatible(ty.flex, *acc)) {
        diags_.error(e.loc, "cannot mix " + describe(ty) + " and " + type_text(*acc) + " in " + what,
                     mix_hint(ty, *acc));
        return bad();
      }
    for (size_t i = 0; i < xs.size(); ++i)
      if (tys[i].flex != Flex::None) adopt(*xs[i], *acc);
    return concrete(*acc);
  }

  Ty infer_access(const Expr& e) {
    const TensorInstance* t = inst_.tensor(e.name);
    for (size_t i = 0; i < e.args.size(); ++i)
      if (e.args[i]) expect_integer(*e.args[i], "index " + std::to_string(i) + " of '" + e.name + "'");
    if (!t) return record(e, bad());
    if (e.pad_value) expect_value(*e.pad_value, t->type, "the pad value of '" + e.name + "'");
    return record(e, concrete(t->type));
  }

  Ty infer_unary(const Expr& e) {
    if (e.args.empty() || !e.args[0]) return record(e, bad());
    Ty a = infer(*e.args[0]);
    if (a.bad) return record(e, a);
    if (e.unary_op == UnaryOp::Not) {
      if (a.flex != Flex::None || a.t != ScalarType::Bool) {
        diags_.error(e.loc, "'!' needs a bool operand, found " + describe(a),
                     "compare it instead, e.g. x == 0");
        return record(e, bad());
      }
      return record(e, a);
    }
    if (a.flex == Flex::None && a.t == ScalarType::Bool) {
      diags_.error(e.loc, "'-' cannot be applied to bool", "use '!' to negate a bool");
      return record(e, bad());
    }
    return record(e, a);
  }

  Ty infer_binary(const Expr& e) {
    if (e.args.size() != 2 || !e.args[0] || !e.args[1]) return record(e, bad());
    Ty a = infer(*e.args[0]), b = infer(*e.args[1]);
    if (a.bad || b.bad) return record(e, bad());
    BinaryOp op = e.binary_op;
    std::string what = "'" + std::string(binary_op_text(op)) + "'";
    if (op == BinaryOp::And || op == BinaryOp::Or) {
      for (const Ty& x : {a, b})
        if (x.flex != Flex::None || x.t != ScalarType::Bool) {
          diags_.error(e.loc, what + " needs bool operands, found " + describe(x),
                       "compare numbers first, e.g. x != 0");
          return record(e, bad());
        }
      return record(e, concrete(ScalarType::Bool));
    }
    Ty c = unify(e, {e.args[0].get(), e.args[1].get()}, {a, b}, what);
    if (c.bad) return record(e, c);
    if (is_comparison(op)) {
      settle(*e.args[0], a, c.t);
      settle(*e.args[1], b, c.t);
      if (c.t == ScalarType::Bool && op != BinaryOp::Eq && op != BinaryOp::Ne) {
        diags_.error(e.loc, what + " cannot order bools", "compare bools with == or !=");
        return record(e, bad());
      }
      return record(e, concrete(ScalarType::Bool));
    }
    if (c.flex == Flex::None && c.t == ScalarType::Bool && !is_bitwise(op)) {
      diags_.error(e.loc, what + " cannot be applied to bool",
                   "use &&, || and ! on bools, or turn them into numbers with select(b, 1, 0)");
      return record(e, bad());
    }
    if (integer_only(op) && (c.flex == Flex::Float || is_float(c.t))) {
      diags_.error(e.loc, what + " needs integer operands, found " + describe(c),
                   op == BinaryOp::Mod ? "floats have no '%'; use x - floor(x / y) * y" : "");
      return record(e, bad());
    }
    if ((op == BinaryOp::Shl || op == BinaryOp::Shr || op == BinaryOp::Mod) &&
        c.t == ScalarType::Bool && c.flex == Flex::None) {
      diags_.error(e.loc, what + " cannot be applied to bool");
      return record(e, bad());
    }
    return record(e, c);
  }

  Ty infer_call(const Expr& e) {
    const IntrinsicInfo* info = find_intrinsic(e.name);
    std::vector<const Expr*> xs;
    std::vector<Ty> tys;
    bool any_bad = !info || e.args.size() != static_cast<size_t>(info->arity);
    for (const auto& a : e.args) {
      if (!a) return record(e, bad());
      xs.push_back(a.get());
      tys.push_back(infer(*a));
      any_bad |= tys.back().bad;
    }
    if (any_bad) return record(e, bad());
    std::string what = "'" + e.name + "'";
    switch (info->cls) {
      case IntrinsicClass::FloatMath:
      case IntrinsicClass::Fma: {
        Ty c = unify(e, xs, tys, what);
        if (c.bad) return record(e, c);
        if (c.flex == Flex::Int) return record(e, flexible(Flex::Float));  // exp(1) is exp(1.0)
        if (c.flex == Flex::None && !is_float(c.t)) {
          diags_.error(e.loc, what + " needs float arguments, found " + describe(c),
                       "convert first: " + e.name + "(cast(f32, ...))");
          return record(e, bad());
        }
        return record(e, c);
      }
      case IntrinsicClass::MinMax:
      case IntrinsicClass::Abs:
      case IntrinsicClass::Clamp: {
        Ty c = unify(e, xs, tys, what);
        if (!c.bad && c.flex == Flex::None && c.t == ScalarType::Bool) {
          diags_.error(e.loc, what + " needs numbers, found bool");
          return record(e, bad());
        }
        return record(e, c);
      }
      case IntrinsicClass::Quant:
        for (size_t i = 0; i < xs.size(); ++i) {
          if (tys[i].flex != Flex::None ? !compatible(tys[i].flex, ScalarType::I32)
                                        : tys[i].t != ScalarType::I32) {
            diags_.error(e.loc, what + " needs i32 arguments, found " + describe(tys[i]) +
                                    " as argument " + std::to_string(i + 1),
                         "convert it: cast(i32, ...)");
            return record(e, bad());
          }
          settle(*xs[i], tys[i], ScalarType::I32);
        }
        return record(e, concrete(ScalarType::I32));
      case IntrinsicClass::Select: {
        if (tys[0].flex != Flex::None || tys[0].t != ScalarType::Bool) {
          diags_.error(start_loc(*xs[0]), "the condition of 'select' must be bool, found " + describe(tys[0]),
                       "compare it, e.g. select(x != 0, a, b)");
          return record(e, bad());
        }
        return record(e, unify(e, {xs[1], xs[2]}, {tys[1], tys[2]}, "the branches of 'select'"));
      }
    }
    return record(e, bad());
  }

  Ty infer_cast(const Expr& e) {
    std::optional<ScalarType> target = parse_scalar_type(e.cast_type.name);
    if (!target) {
      auto tp = inst_.type_params.find(e.cast_type.name);
      if (tp != inst_.type_params.end()) target = tp->second;
    }
    if (e.args.empty() || !e.args[0]) return record(e, bad());
    Ty a = infer(*e.args[0]);
    if (a.bad || !target) return record(e, bad());
    settle(*e.args[0], a);
    if (e.saturating && *target == ScalarType::Bool) {
      diags_.error(e.loc, "'sat' cannot convert to bool", "compare instead, e.g. x != 0");
      return record(e, bad());
    }
    return record(e, concrete(*target));
  }

  Ty infer_reduce(const Expr& e) {
    for (const auto& r : e.ranges) type_range(r);
    if (e.args.empty() || !e.args[0]) return record(e, bad());
    Ty body = infer(*e.args[0]);
    if (body.bad) return record(e, body);
    std::string op(reduce_op_name(e.reduce_op));
    if (body.flex == Flex::None && body.t == ScalarType::Bool) {
      diags_.error(e.loc, "the body of '" + op + "' is bool; reductions need numbers",
                   "count with select(cond, 1, 0)");
      return record(e, bad());
    }
    if (e.reduce_op == ReduceOp::Argmax || e.reduce_op == ReduceOp::Argmin) {
      settle(*e.args[0], body);
      return record(e, concrete(ScalarType::Index));
    }
    return record(e, body);
  }

  Instance& inst_;
  WorkloadDiags& diags_;
  std::unordered_map<const Expr*, Flex> flex_;
};

}  // namespace

std::optional<ScalarType> type_let(Instance& inst, const LetDecl& let, WorkloadDiags& diags) {
  if (!let.value) return std::nullopt;
  Typer typer(inst, diags);
  Ty ty = typer.infer(*let.value);
  if (ty.bad) return std::nullopt;
  ty = typer.settle(*let.value, ty);
  if (ty.t == ScalarType::Bool) {
    diags.error(let.loc, "let '" + let.name + "' is bool; a let must be an integer or a float");
    return std::nullopt;
  }
  return ty.t;
}

bool type_tensor_decl(Instance& inst, const TensorInstance& t, WorkloadDiags& diags) {
  Typer typer(inst, diags);
  bool ok = true;
  const TensorDecl& d = *t.decl;
  for (size_t i = 0; i < d.shape.size(); ++i)
    if (d.shape[i])
      ok &= typer.expect_integer(*d.shape[i], "extent " + std::to_string(i) + " of '" + d.name + "'");
  if (d.domain.kind == DomainKind::Range) {
    if (d.domain.lo) ok &= typer.expect_number(*d.domain.lo, t.type, "the domain's lower bound of '" + d.name + "'").has_value();
    if (d.domain.hi) ok &= typer.expect_number(*d.domain.hi, t.type, "the domain's upper bound of '" + d.name + "'").has_value();
  }
  return ok;
}

bool type_statements(Instance& inst, WorkloadDiags& diags) {
  Typer typer(inst, diags);
  for (const auto& s : inst.pattern().stmts) typer.type_stmt(s);
  return !diags.has_errors();
}

}  // namespace ekb::ir::detail
