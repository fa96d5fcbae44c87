// Index-bounds proofs for one workload. Every index of an access without a boundary (pad, edge
// and mirror accept any index) and of every assignment must lie in [0, extent - 1] for all values
// of the enclosing variables.
//
// Two sound analyses are intersected:
//  - interval arithmetic over the whole expression (handles clamp/min/max/select/floor/casts,
//    float arithmetic and data-dependent indices through the input's declared domain);
//  - an affine view of index-typed arithmetic, where each loop variable is bounded by its range's
//    (affine) bounds in terms of the outer variables. Eliminating variables innermost first keeps
//    the relations that plain intervals lose in triangular loops: in `for j in 1..i: a[i - j]` the
//    index is at least i - (i - 1) = 1.
#include <algorithm>
#include <cmath>
#include <numbers>
#include <set>

#include "ir/verify_internal.h"

namespace ekb::ir::detail {

namespace {

// sum(coef * var) + k, where k bounds the non-affine parts.
struct Affine {
  std::vector<std::pair<size_t, double>> terms;  // (variable slot, coefficient), one per slot
  RealInterval k{0, 0};
};

Affine constant(RealInterval k) { return Affine{{}, k}; }

Affine plus(Affine a, const Affine& b) {
  for (const auto& term : b.terms) {
    auto it = std::find_if(a.terms.begin(), a.terms.end(),
                           [&](const auto& t) { return t.first == term.first; });
    if (it == a.terms.end())
      a.terms.push_back(term);
    else
      it->second += term.second;
  }
  a.k = add(a.k, b.k);
  return a;
}

Affine scale(Affine a, double c) {
  for (auto& t : a.terms) t.second *= c;
  a.k = mul(a.k, RealInterval::point(c));
  return a;
}

struct Var {
  std::string name;
  RealInterval iv;    // every value it takes
  Affine lo, hi;  // its range, hi exclusive, in terms of outer variables only
};

class BoundsChecker {
 public:
  BoundsChecker(const Instance& inst, const std::map<std::string, RealInterval>& ranges,
                WorkloadDiags& d)
      : inst_(inst), ranges_(ranges), diags_(d) {}

  void run() {
    for (const auto& s : inst_.pattern().stmts) stmt(s, true);
  }

 private:
  // ---- environment ----
  int find_var(const std::string& n) const {
    for (size_t i = vars_.size(); i-- > 0;)
      if (vars_[i].name == n) return static_cast<int>(i);
    return -1;
  }

  std::optional<double> constant_value(const std::string& n) const {
    if (auto p = inst_.params.find(n); p != inst_.params.end()) return static_cast<double>(p->second);
    if (auto l = inst_.lets.find(n); l != inst_.lets.end()) return l->second.as_double();
    return std::nullopt;
  }

  // Binds a range's variable; false when the range is provably empty (its body never runs).
  bool push_range(const Range& r) {
    RealInterval lo = eval(r.lo.get()), hi = eval(r.hi.get());
    Affine alo = affine(r.lo.get()), ahi = affine(r.hi.get());
    Var v{r.var, {}, alo, ahi};
    v.iv = {std::max(lo.lo, bound(alo, false)), std::min(hi.hi, bound(ahi, true)) - 1};
    double longest = std::min(hi.hi - lo.lo, bound(plus(ahi, scale(alo, -1)), true));
    vars_.push_back(std::move(v));
    return longest > 0 && !vars_.back().iv.empty();
  }

  void push_extent(const std::string& name, int64_t extent) {
    double e = static_cast<double>(extent);
    vars_.push_back(Var{name, {0, e - 1}, constant(RealInterval::point(0)), constant(RealInterval::point(e))});
  }

  ScalarType type_of(const Expr& e) const {
    auto it = inst_.expr_types.find(&e);
    return it == inst_.expr_types.end() ? ScalarType::Index : it->second;
  }

  // ---- affine view ----
  Affine affine(const Expr* e) {
    if (!e) return constant(RealInterval::full());
    if (type_of(*e) == ScalarType::Index) {
      switch (e->kind) {
        case ExprKind::IntLit: return constant(RealInterval::point(static_cast<double>(e->int_value)));
        case ExprKind::Name: {
          int slot = find_var(e->name);
          if (slot >= 0) return Affine{{{static_cast<size_t>(slot), 1.0}}, {0, 0}};
          break;
        }
        case ExprKind::Unary:
          if (e->unary_op == UnaryOp::Neg) return scale(affine(e->args[0].get()), -1);
          break;
        case ExprKind::Binary: {
          BinaryOp op = e->binary_op;
          if (op == BinaryOp::Add || op == BinaryOp::Sub) {
            Affine b = affine(e->args[1].get());
            return plus(affine(e->args[0].get()), op == BinaryOp::Sub ? scale(b, -1) : b);
          }
          if (op == BinaryOp::Mul) {
            Affine a = affine(e->args[0].get()), b = affine(e->args[1].get());
            if (a.terms.empty() && a.k.is_point()) return scale(b, a.k.lo);
            if (b.terms.empty() && b.k.is_point()) return scale(a, b.k.lo);
          }
          break;
        }
        default: break;
      }
    }
    return constant(eval(e));
  }

  // The largest (upper) or smallest value of f: substitute each variable, innermost first, by the
  // end of its range that maximizes (minimizes) its term. Each step removes the innermost slot and
  // adds only outer ones, so this ends after at most one step per variable.
  double bound(Affine f, bool upper) const {
    for (;;) {
      auto inner = f.terms.end();
      for (auto it = f.terms.begin(); it != f.terms.end(); ++it)
        if (it->second != 0 && (inner == f.terms.end() || it->first > inner->first)) inner = it;
      if (inner == f.terms.end()) break;
      size_t slot = inner->first;
      double c = inner->second;
      f.terms.erase(inner);
      if (slot >= vars_.size()) return upper ? RealInterval::full().hi : RealInterval::full().lo;
      const Var& v = vars_[slot];
      bool use_hi = (c > 0) == upper;
      Affine end = use_hi ? plus(v.hi, constant(RealInterval::point(-1))) : v.lo;
      f = plus(f, scale(end, c));
    }
    return upper ? f.k.hi : f.k.lo;
  }

  // ---- interval evaluation ----
  RealInterval eval(const Expr* e) {
    if (!e) return RealInterval::full();
    ScalarType t = type_of(*e);
    RealInterval r = RealInterval::full();
    switch (e->kind) {
      case ExprKind::IntLit: return RealInterval::point(static_cast<double>(e->int_value));
      case ExprKind::FloatLit:
        return std::isnan(e->float_value) ? RealInterval::full() : RealInterval::point(e->float_value);
      case ExprKind::BoolLit: return RealInterval::point(e->bool_value ? 1 : 0);
      case ExprKind::Name: {
        int slot = find_var(e->name);
        if (slot >= 0) return vars_[static_cast<size_t>(slot)].iv;
        if (auto v = constant_value(e->name)) return RealInterval::point(*v);
        return RealInterval::full();
      }
      case ExprKind::Access: r = element(*e); break;
      case ExprKind::Unary: {
        RealInterval a = eval(arg(*e, 0));
        if (e->unary_op == UnaryOp::Not) return {a.hi >= 1 ? 0.0 : 1.0, a.lo >= 1 ? 0.0 : 1.0};
        r = neg(a);
        break;
      }
      case ExprKind::Binary: r = binary(*e, t); break;
      case ExprKind::Call: r = call(*e); break;
      case ExprKind::Cast: r = cast(*e, t); break;
      case ExprKind::Reduce: r = reduce(*e, t); break;
    }
    return is_float(t) ? fix_nan(r) : wrap_to(r, t);
  }

  static const Expr* arg(const Expr& e, size_t i) { return i < e.args.size() ? e.args[i].get() : nullptr; }

  RealInterval element(const Expr& e) {
    const TensorInstance* t = inst_.tensor(e.name);
    if (!t) return RealInterval::full();
    RealInterval v = RealInterval::of_type(t->type);
    if (auto r = ranges_.find(e.name); r != ranges_.end()) v = r->second;
    if (e.boundary == Boundary::Pad && e.pad_value) v = hull(v, eval(e.pad_value.get()));
    return v;
  }

  static RealInterval truth(bool always, bool never) {
    return always ? RealInterval::point(1) : never ? RealInterval::point(0) : RealInterval{0, 1};
  }

  RealInterval binary(const Expr& e, ScalarType t) {
    RealInterval a = eval(arg(e, 0)), b = eval(arg(e, 1));
    bool fl = is_float(t);
    switch (e.binary_op) {
      case BinaryOp::Add: return add(a, b);
      case BinaryOp::Sub: return sub(a, b);
      case BinaryOp::Mul: return mul(a, b);
      case BinaryOp::Div: return fl ? div_real(a, b) : div_floor(a, b);
      case BinaryOp::Mod: return fl ? RealInterval::full() : mod_floor(a, b);
      case BinaryOp::Shl: return shl(a, b);
      case BinaryOp::Shr: return shr(a, b);
      case BinaryOp::BitAnd: return bit_and(a, b, t);
      case BinaryOp::BitOr:
      case BinaryOp::BitXor: return bit_or(a, b, t);
      case BinaryOp::And: return truth(a.lo >= 1 && b.lo >= 1, a.hi < 1 || b.hi < 1);
      case BinaryOp::Or: return truth(a.lo >= 1 || b.lo >= 1, a.hi < 1 && b.hi < 1);
      case BinaryOp::Lt: return truth(a.hi < b.lo, a.lo >= b.hi);
      case BinaryOp::Le: return truth(a.hi <= b.lo, a.lo > b.hi);
      case BinaryOp::Gt: return truth(a.lo > b.hi, a.hi <= b.lo);
      case BinaryOp::Ge: return truth(a.lo >= b.hi, a.hi < b.lo);
      case BinaryOp::Eq: return truth(a.is_point() && b.is_point() && a.lo == b.lo, a.hi < b.lo || b.hi < a.lo);
      case BinaryOp::Ne: return truth(a.hi < b.lo || b.hi < a.lo, a.is_point() && b.is_point() && a.lo == b.lo);
    }
    return RealInterval::full();
  }

  RealInterval call(const Expr& e) {
    std::vector<RealInterval> xs;
    for (const auto& a : e.args) xs.push_back(eval(a.get()));
    const std::string& n = e.name;
    auto x = [&](size_t i) { return i < xs.size() ? xs[i] : RealInterval::full(); };
    if (n == "min") return min_iv(x(0), x(1));
    if (n == "max") return max_iv(x(0), x(1));
    if (n == "clamp") return min_iv(max_iv(x(0), x(1)), x(2));
    if (n == "abs") return abs_iv(x(0));
    if (n == "select") {
      RealInterval c = x(0);
      return c.lo >= 1 ? x(1) : c.hi < 1 ? x(2) : hull(x(1), x(2));
    }
    if (n == "floor") return monotone(x(0), [](double v) { return std::floor(v); });
    if (n == "ceil") return monotone(x(0), [](double v) { return std::ceil(v); });
    if (n == "trunc") return monotone(x(0), [](double v) { return std::trunc(v); });
    if (n == "round") return monotone(x(0), [](double v) { return std::round(v); });
    if (n == "round_even") return monotone(x(0), [](double v) { return v - std::remainder(v, 1.0); });
    if (n == "exp") return monotone(x(0), [](double v) { return std::exp(v); });
    if (n == "exp2") return monotone(x(0), [](double v) { return std::exp2(v); });
    if (n == "tanh") return monotone(x(0), [](double v) { return std::tanh(v); });
    if (n == "erf") return monotone(x(0), [](double v) { return std::erf(v); });
    if (n == "atan") return monotone(x(0), [](double v) { return std::atan(v); });
    if (n == "sigmoid") return monotone(x(0), [](double v) { return 1 / (1 + std::exp(-v)); });
    if (n == "log" || n == "log2" || n == "sqrt") {
      if (x(0).lo < 0) return RealInterval::full();  // NaN below zero
      if (n == "sqrt") return monotone(x(0), [](double v) { return std::sqrt(v); });
      if (n == "log") return monotone(x(0), [](double v) { return std::log(v); });
      return monotone(x(0), [](double v) { return std::log2(v); });
    }
    if (n == "rsqrt") {
      if (x(0).lo < 0) return RealInterval::full();
      return {1 / std::sqrt(x(0).hi), 1 / std::sqrt(x(0).lo)};
    }
    if (n == "sin" || n == "cos") return {-1, 1};  // NaN for infinite inputs: fix_nan cannot see it
    if (n == "atan2") return {-std::numbers::pi, std::numbers::pi};
    if (n == "fma") return add(mul(x(0), x(1)), x(2));
    if (n == "rdmulh" || n == "rshift" || n == "requant") return RealInterval::of_type(ScalarType::I32);
    return RealInterval::full();  // tan, pow
  }

  RealInterval cast(const Expr& e, ScalarType t) {
    const Expr* a = arg(e, 0);
    RealInterval v = eval(a);
    if (is_float(t)) return v;  // a cast to a float type does not round in the reference
    if (t == ScalarType::Bool) return truth(v.lo > 0 || v.hi < 0, v.is_point() && v.lo == 0);
    if ((a && is_float(type_of(*a))) || e.saturating) return saturate_to(v, t);
    return wrap_to(v, t);
  }

  RealInterval reduce(const Expr& e, ScalarType t) {
    size_t mark = vars_.size();
    bool runs = true, maybe_empty = false;
    RealInterval count = RealInterval::point(1), first_var{}, first_lo{};
    for (const auto& r : e.ranges) {
      RealInterval lo = eval(r.lo.get()), hi = eval(r.hi.get());
      if (vars_.size() == mark) first_lo = lo;
      runs &= push_range(r);
      if (vars_.size() == mark + 1) first_var = vars_.back().iv;
      RealInterval len{std::max(0.0, hi.lo - lo.hi), std::max(0.0, hi.hi - lo.lo)};
      maybe_empty |= len.lo <= 0;
      count = mul(count, len);
    }
    RealInterval body = runs ? eval(arg(e, 0)) : RealInterval{};
    vars_.resize(mark);
    bool fl = is_float(t);
    switch (e.reduce_op) {
      case ReduceOp::Sum: {
        if (!runs) return RealInterval::point(0);
        // k terms in [a, b], k in [count.lo, count.hi].
        RealInterval lo_sum = mul(count, RealInterval::point(body.lo)), hi_sum = mul(count, RealInterval::point(body.hi));
        return {std::min(lo_sum.lo, lo_sum.hi), std::max(hi_sum.lo, hi_sum.hi)};
      }
      case ReduceOp::Prod: return runs ? RealInterval::of_type(t) : RealInterval::point(1);
      case ReduceOp::Max: {
        double id = fl ? RealInterval::full().lo : static_cast<double>(int_min(t));
        if (!runs) return RealInterval::point(id);
        return maybe_empty ? hull(body, RealInterval::point(id)) : body;
      }
      case ReduceOp::Min: {
        double id = fl ? RealInterval::full().hi : static_cast<double>(int_max(t));
        if (!runs) return RealInterval::point(id);
        return maybe_empty ? hull(body, RealInterval::point(id)) : body;
      }
      case ReduceOp::Argmax:
      case ReduceOp::Argmin:
        if (!runs) return first_lo;
        return maybe_empty ? hull(first_var, first_lo) : first_var;
    }
    return RealInterval::full();
  }

  // ---- the checks ----
  void stmt(const Stmt& s, bool top) {
    size_t mark = vars_.size();
    if (s.kind == StmtKind::For) {
      bool runs = true;
      for (const auto& r : s.ranges) {
        check(r.lo.get());
        check(r.hi.get());
        if (!(runs = push_range(r))) break;  // an empty loop: its body never runs
      }
      if (runs)
        for (const auto& b : s.body) stmt(b, false);
      vars_.resize(mark);
      return;
    }
    const TensorInstance* t = inst_.tensor(s.tensor);
    if (!t || t->shape.size() != s.indices.size()) return;
    bool pure = top && defined_.insert(s.tensor).second;
    // Pure-definition variables and an update's free variables cover the full extent.
    for (size_t d = 0; d < s.indices.size(); ++d) {
      const Expr& ix = *s.indices[d];
      if (ix.kind == ExprKind::Name && (pure || (find_var(ix.name) < 0 && !constant_value(ix.name))))
        push_extent(ix.name, t->shape[d]);
    }
    for (size_t d = 0; d < s.indices.size(); ++d) {
      check(s.indices[d].get());
      if (!pure) check_index(s.loc, s.tensor, d, *s.indices[d], t->shape[d], true);
    }
    check(s.value.get());
    vars_.resize(mark);
  }

  void check(const Expr* e) {
    if (!e) return;
    if (e->kind == ExprKind::Reduce) {
      size_t mark = vars_.size();
      bool runs = true;
      for (const auto& r : e->ranges) {
        check(r.lo.get());
        check(r.hi.get());
        if (e->reduce_op == ReduceOp::Argmax || e->reduce_op == ReduceOp::Argmin) check_nonempty(*e, r);
        if (!(runs = push_range(r))) break;
      }
      if (runs) check(arg(*e, 0));
      vars_.resize(mark);
      return;
    }
    for (const auto& a : e->args) check(a.get());
    if (e->kind == ExprKind::Binary || e->kind == ExprKind::Call) return check_operands(*e);
    if (e->kind != ExprKind::Access) return;
    check(e->pad_value.get());
    const TensorInstance* t = inst_.tensor(e->name);
    if (e->boundary != Boundary::None || !t || t->shape.size() != e->args.size()) return;
    for (size_t d = 0; d < e->args.size(); ++d)
      if (e->args[d]) check_index(e->loc, e->name, d, *e->args[d], t->shape[d], false);
  }

  // Every value e takes here: both analyses intersected (empty when e is unreachable).
  RealInterval value_of(const Expr* e) {
    Affine a = affine(e);
    return intersect(eval(e), {bound(a, false), bound(a, true)});
  }

  // The reference rejects an empty argmax/argmin, so its range must be provably non-empty.
  void check_nonempty(const Expr& e, const Range& r) {
    RealInterval lo = eval(r.lo.get()), hi = eval(r.hi.get());
    Affine len = plus(affine(r.hi.get()), scale(affine(r.lo.get()), -1));
    double shortest = std::max(hi.lo - lo.hi, bound(len, false));
    if (shortest > 0) return;
    std::string op(reduce_op_name(e.reduce_op));
    diags_.error(e.loc, "the range of '" + op + "' may be empty",
                 "'" + op + "' over an empty range is an error; make sure " + r.var +
                     "'s range always has an element");
  }

  // Shift amounts and divisors the reference rejects.
  void check_operands(const Expr& e) {
    auto outside = [&](const Expr* amount, double lo, double hi, const std::string& what) {
      RealInterval v = value_of(amount);
      if (v.empty() || v.within(lo, hi)) return;
      diags_.error(e.loc, what + " may be outside " + format_interval({lo, hi}) + ": " + format_interval(v),
                   "clamp it, or read it from an input whose declared domain is within range");
    };
    if (e.kind == ExprKind::Call) {
      if (e.name == "rshift") outside(arg(e, 1), 0, 31, "the exponent of 'rshift'");
      if (e.name == "requant") outside(arg(e, 2), -31, 31, "the shift of 'requant'");
      return;
    }
    ScalarType t = type_of(e);
    if (is_float(t) || t == ScalarType::Bool) return;
    BinaryOp op = e.binary_op;
    if (op == BinaryOp::Shl || op == BinaryOp::Shr) outside(arg(e, 1), 0, 63, "the shift amount");
    if (op == BinaryOp::Div || op == BinaryOp::Mod) {
      // A divisor that may be zero is common (counts read from data); one that always is, is a bug.
      RealInterval v = value_of(arg(e, 1));
      if (v.is_point() && v.lo == 0)
        diags_.error(e.loc, "division by zero", "the divisor is 0 wherever this is evaluated");
    }
  }

  void check_index(SourceLoc loc, const std::string& tensor, size_t d, const Expr& ix,
                   int64_t extent, bool write) {
    RealInterval iv = value_of(&ix);
    double top = static_cast<double>(extent - 1);
    if (iv.empty() || iv.within(0, top)) return;
    const TensorInstance* t = inst_.tensor(tensor);
    std::string zero = t && is_float(t->type) ? "0.0" : "0";
    std::string hint =
        write ? "a write must stay in bounds: narrow the loop's range or clamp the index"
              : "read through edge(" + tensor + ")[...] or pad(" + tensor + ", " + zero +
                    ")[...], or clamp the index";
    diags_.error(loc,
                 "index " + std::to_string(d) + " of '" + tensor + "' may be out of bounds: " +
                     format_interval(iv) + " not within " + format_interval({0, top}),
                 hint);
  }

  const Instance& inst_;
  const std::map<std::string, RealInterval>& ranges_;
  WorkloadDiags& diags_;
  std::vector<Var> vars_;
  std::set<std::string> defined_;
};

}  // namespace

void check_bounds(const Instance& inst, const std::map<std::string, RealInterval>& input_ranges,
                  WorkloadDiags& diags) {
  BoundsChecker(inst, input_ranges, diags).run();
}

}  // namespace ekb::ir::detail
