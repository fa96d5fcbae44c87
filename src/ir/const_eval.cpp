// Evaluation of the typed constant expressions of lets, shapes and input domains, with the IR's
// reference semantics (docs/IR.md): integers wrap at their type's width, / and % are floor
// division and modulo, floats are computed in f64. Division by zero or an out-of-range shift is
// reported, never undefined behaviour.
#include <cmath>
#include <limits>

#include "ir/verify_internal.h"

namespace ekb::ir::detail {

namespace {

LetValue F(double v) { return LetValue{true, 0, v}; }
LetValue I(int64_t v) { return LetValue{false, v, 0}; }

int64_t as_int(const LetValue& v) {
  if (!v.is_float) return v.int_value;
  double d = v.float_value;
  if (std::isnan(d)) return 0;
  if (d >= 0x1p63) return std::numeric_limits<int64_t>::max();
  if (d < -0x1p63) return std::numeric_limits<int64_t>::min();
  return static_cast<int64_t>(d);
}

int64_t wrapping(ScalarType t, uint64_t v) { return wrap_int(t, static_cast<int64_t>(v)); }

// float -> integer: truncates toward zero, saturates, NaN -> 0.
int64_t float_to_int(ScalarType t, double d) {
  if (std::isnan(d)) return 0;
  d = std::trunc(d);
  if (d <= static_cast<double>(int_min(t))) return int_min(t);
  if (d >= static_cast<double>(int_max(t))) return int_max(t);
  return static_cast<int64_t>(d);
}

// gemmlowp SaturatingRoundingDoublingHighMul.
int64_t rdmulh(int64_t a, int64_t b) {
  if (a == b && a == std::numeric_limits<int32_t>::min()) return std::numeric_limits<int32_t>::max();
  int64_t ab = a * b;
  int64_t nudge = ab >= 0 ? (int64_t{1} << 30) : (1 - (int64_t{1} << 30));
  return (ab + nudge) / (int64_t{1} << 31);
}

// gemmlowp RoundingDivideByPOT (0 <= n <= 31).
int64_t rshift(int64_t a, int64_t n) {
  int64_t mask = (int64_t{1} << n) - 1;
  int64_t remainder = a & mask;
  int64_t threshold = (mask >> 1) + (a < 0 ? 1 : 0);
  return (a >> n) + (remainder > threshold ? 1 : 0);
}

class ConstEval {
 public:
  ConstEval(const Instance& inst, WorkloadDiags& d, std::string_view ctx)
      : inst_(inst), diags_(d), ctx_(ctx) {}

  std::optional<LetValue> eval(const Expr& e) {
    ScalarType t = type_of(e);
    switch (e.kind) {
      case ExprKind::IntLit:
        return is_float(t) ? F(static_cast<double>(e.int_value)) : I(wrap_int(t, e.int_value));
      case ExprKind::FloatLit: return F(e.float_value);
      case ExprKind::BoolLit: return I(e.bool_value ? 1 : 0);
      case ExprKind::Name: {
        if (auto p = inst_.params.find(e.name); p != inst_.params.end()) return I(p->second);
        if (auto l = inst_.lets.find(e.name); l != inst_.lets.end()) return convert(l->second, t);
        return fail(e, "'" + e.name + "' has no value here");
      }
      case ExprKind::Unary: {
        auto a = arg(e, 0);
        if (!a) return a;
        if (e.unary_op == UnaryOp::Not) return I(a->int_value == 0);
        if (is_float(t)) return F(-a->as_double());
        return I(wrapping(t, 0 - static_cast<uint64_t>(a->int_value)));
      }
      case ExprKind::Binary: return binary(e, t);
      case ExprKind::Call: return call(e, t);
      case ExprKind::Cast: {
        auto a = arg(e, 0);
        if (!a) return a;
        if (is_float(t)) return F(a->as_double());
        if (t == ScalarType::Bool) return I(a->is_float ? a->float_value != 0 : a->int_value != 0);
        if (a->is_float) return I(float_to_int(t, a->float_value));
        return I(e.saturating ? saturate_int(t, a->int_value) : wrap_int(t, a->int_value));
      }
      case ExprKind::Access:
      case ExprKind::Reduce: break;
    }
    return fail(e, "this expression is not a constant");
  }

 private:
  ScalarType type_of(const Expr& e) const {
    auto it = inst_.expr_types.find(&e);
    return it == inst_.expr_types.end() ? ScalarType::Index : it->second;
  }

  std::optional<LetValue> fail(const Expr& e, const std::string& msg) {
    diags_.error(e.loc, msg + " in " + std::string(ctx_));
    return std::nullopt;
  }

  std::optional<LetValue> arg(const Expr& e, size_t i) {
    if (i >= e.args.size() || !e.args[i]) return fail(e, "a missing operand");
    return eval(*e.args[i]);
  }

  static LetValue convert(const LetValue& v, ScalarType t) {
    if (is_float(t)) return F(v.as_double());
    return I(as_int(v));
  }

  std::optional<LetValue> binary(const Expr& e, ScalarType t) {
    auto a = arg(e, 0);
    if (!a) return a;
    auto b = arg(e, 1);
    if (!b) return b;
    BinaryOp op = e.binary_op;
    if (op == BinaryOp::And) return I(a->int_value && b->int_value);
    if (op == BinaryOp::Or) return I(a->int_value || b->int_value);
    if (op >= BinaryOp::Eq && op <= BinaryOp::Ge) {
      bool fl = a->is_float || b->is_float;
      double x = a->as_double(), y = b->as_double();
      int64_t p = a->int_value, q = b->int_value;
      auto cmp = [&](auto l, auto r) {
        switch (op) {
          case BinaryOp::Eq: return l == r;
          case BinaryOp::Ne: return l != r;
          case BinaryOp::Lt: return l < r;
          case BinaryOp::Le: return l <= r;
          case BinaryOp::Gt: return l > r;
          default: return l >= r;
        }
      };
      return I(fl ? cmp(x, y) : cmp(p, q));
    }
    if (is_float(t)) {
      double x = a->as_double(), y = b->as_double();
      switch (op) {
        case BinaryOp::Add: return F(x + y);
        case BinaryOp::Sub: return F(x - y);
        case BinaryOp::Mul: return F(x * y);
        case BinaryOp::Div: return F(x / y);
        default: return fail(e, "'" + std::string(binary_op_text(op)) + "' on floats");
      }
    }
    uint64_t x = static_cast<uint64_t>(a->int_value), y = static_cast<uint64_t>(b->int_value);
    int64_t p = a->int_value, q = b->int_value;
    switch (op) {
      case BinaryOp::Add: return I(wrapping(t, x + y));
      case BinaryOp::Sub: return I(wrapping(t, x - y));
      case BinaryOp::Mul: return I(wrapping(t, x * y));
      case BinaryOp::Div: {
        if (q == 0) return fail(e, "division by zero");
        if (q == -1) return I(wrapping(t, 0 - x));  // INT64_MIN / -1 wraps
        int64_t d = p / q;
        if (p % q != 0 && ((p < 0) != (q < 0))) --d;
        return I(wrap_int(t, d));
      }
      case BinaryOp::Mod: {
        if (q == 0) return fail(e, "division by zero");
        if (q == -1) return I(0);
        int64_t r = p % q;
        if (r != 0 && ((r < 0) != (q < 0))) r += q;
        return I(wrap_int(t, r));
      }
      case BinaryOp::BitAnd: return I(wrap_int(t, p & q));
      case BinaryOp::BitOr: return I(wrap_int(t, p | q));
      case BinaryOp::BitXor: return I(wrap_int(t, p ^ q));
      case BinaryOp::Shl:
      case BinaryOp::Shr:
        if (q < 0 || q > 63) return fail(e, "shift by " + std::to_string(q) + " is outside [0, 63]");
        return I(op == BinaryOp::Shl ? wrapping(t, x << q) : wrap_int(t, p >> q));
      default: return fail(e, "an unexpected operator");
    }
  }

  std::optional<LetValue> call(const Expr& e, ScalarType t) {
    std::vector<LetValue> xs;
    for (size_t i = 0; i < e.args.size(); ++i) {
      auto a = arg(e, i);
      if (!a) return a;
      xs.push_back(*a);
    }
    const std::string& n = e.name;
    auto need = [&](size_t k) { return xs.size() == k; };
    if (n == "select" && need(3)) return convert(xs[0].int_value ? xs[1] : xs[2], t);
    if (is_float(t)) {
      auto d = [&](size_t i) { return xs[i].as_double(); };
      if (need(1)) {
        double x = d(0);
        if (n == "exp") return F(std::exp(x));
        if (n == "log") return F(std::log(x));
        if (n == "log2") return F(std::log2(x));
        if (n == "exp2") return F(std::exp2(x));
        if (n == "sqrt") return F(std::sqrt(x));
        if (n == "rsqrt") return F(1 / std::sqrt(x));
        if (n == "tanh") return F(std::tanh(x));
        if (n == "erf") return F(std::erf(x));
        if (n == "sin") return F(std::sin(x));
        if (n == "cos") return F(std::cos(x));
        if (n == "tan") return F(std::tan(x));
        if (n == "atan") return F(std::atan(x));
        if (n == "sigmoid") return F(1 / (1 + std::exp(-x)));
        if (n == "floor") return F(std::floor(x));
        if (n == "ceil") return F(std::ceil(x));
        if (n == "round") return F(std::round(x));
        if (n == "round_even") return F(x - std::remainder(x, 1.0));
        if (n == "trunc") return F(std::trunc(x));
        if (n == "abs") return F(std::fabs(x));
      }
      if (need(2)) {
        if (n == "atan2") return F(std::atan2(d(0), d(1)));
        if (n == "pow") return F(std::pow(d(0), d(1)));
        if (n == "min") return F(d(1) < d(0) ? d(1) : d(0));
        if (n == "max") return F(d(1) > d(0) ? d(1) : d(0));
      }
      if (need(3)) {
        if (n == "fma") return F(std::fma(d(0), d(1), d(2)));
        if (n == "clamp") return F(std::min(std::max(d(0), d(1)), d(2)));
      }
      return fail(e, "'" + n + "' cannot be evaluated");
    }
    auto v = [&](size_t i) { return as_int(xs[i]); };
    if (n == "min" && need(2)) return I(std::min(v(0), v(1)));
    if (n == "max" && need(2)) return I(std::max(v(0), v(1)));
    if (n == "clamp" && need(3)) return I(std::min(std::max(v(0), v(1)), v(2)));
    if (n == "abs" && need(1))
      return I(wrapping(t, v(0) < 0 ? 0 - static_cast<uint64_t>(v(0)) : static_cast<uint64_t>(v(0))));
    if (n == "rdmulh" && need(2)) return I(rdmulh(v(0), v(1)));
    if ((n == "rshift" && need(2)) || (n == "requant" && need(3))) {
      int64_t shift = n == "rshift" ? -v(1) : v(2);  // requant: > 0 shifts left first
      if (shift < -31 || shift > 31)
        return fail(e, "shift by " + std::to_string(n == "rshift" ? v(1) : shift) + " is out of range for '" + n + "'");
      if (n == "rshift") {
        if (v(1) < 0) return fail(e, "'rshift' needs a shift of at least 0");
        return I(rshift(v(0), v(1)));
      }
      int64_t left = shift > 0 ? shift : 0, right = shift > 0 ? 0 : -shift;
      int64_t scaled = wrap_int(ScalarType::I32, static_cast<int64_t>(static_cast<uint64_t>(v(0)) << left));
      return I(rshift(rdmulh(scaled, v(1)), right));
    }
    return fail(e, "'" + n + "' cannot be evaluated");
  }

  const Instance& inst_;
  WorkloadDiags& diags_;
  std::string_view ctx_;
};

}  // namespace

std::optional<LetValue> eval_const(const Expr& e, const Instance& inst, WorkloadDiags& diags,
                                   std::string_view context) {
  return ConstEval(inst, diags, context).eval(e);
}

}  // namespace ekb::ir::detail
