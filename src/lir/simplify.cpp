#include "lir/simplify.h"

#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <set>

#include "ir/quant.h"
#include "ir/tensor_data.h"
#include "lir/int_interval.h"
#include "lir/mutator.h"

namespace ekb::lir {

namespace {

bool is_int_type(ScalarType t) { return !ir::is_float(t); }  // integers, index and bool

bool is_power_of_two(int64_t c) { return c > 0 && (c & (c - 1)) == 0; }
int log2_of(int64_t c) {
  int k = 0;
  while ((int64_t{1} << k) < c) ++k;
  return k;
}

double fmax_nan(double a, double b) { return (a < b || b != b) ? b : a; }
double fmin_nan(double a, double b) { return (b < a || b != b) ? b : a; }

// float -> integer: truncate toward zero, saturate, NaN -> 0 (the reference's float_to_int).
int64_t float_to_int(double x, ScalarType t) {
  if (x != x) return 0;
  double v = std::trunc(x);
  if (v <= static_cast<double>(ir::int_min(t))) return ir::int_min(t);
  if (v >= static_cast<double>(ir::int_max(t))) return ir::int_max(t);
  return static_cast<int64_t>(v);
}

std::optional<double> fold_float_call(Intrinsic f, const std::vector<double>& x) {
  switch (f) {
    case Intrinsic::Exp:
      return std::exp(x[0]);
    case Intrinsic::Log:
      return std::log(x[0]);
    case Intrinsic::Log2:
      return std::log2(x[0]);
    case Intrinsic::Exp2:
      return std::exp2(x[0]);
    case Intrinsic::Sqrt:
      return std::sqrt(x[0]);
    case Intrinsic::Rsqrt:
      return 1.0 / std::sqrt(x[0]);
    case Intrinsic::Tanh:
      return std::tanh(x[0]);
    case Intrinsic::Erf:
      return std::erf(x[0]);
    case Intrinsic::Sin:
      return std::sin(x[0]);
    case Intrinsic::Cos:
      return std::cos(x[0]);
    case Intrinsic::Tan:
      return std::tan(x[0]);
    case Intrinsic::Atan:
      return std::atan(x[0]);
    case Intrinsic::Atan2:
      return std::atan2(x[0], x[1]);
    case Intrinsic::Sigmoid:
      return 1.0 / (1.0 + std::exp(-x[0]));
    case Intrinsic::Pow:
      return std::pow(x[0], x[1]);
    case Intrinsic::Floor:
      return std::floor(x[0]);
    case Intrinsic::Ceil:
      return std::ceil(x[0]);
    case Intrinsic::Round:
      return std::round(x[0]);
    case Intrinsic::RoundEven:
      return std::nearbyint(x[0]);
    case Intrinsic::Trunc:
      return std::trunc(x[0]);
    case Intrinsic::Fma:
      return std::fma(x[0], x[1], x[2]);
    case Intrinsic::Abs:
      return std::fabs(x[0]);
    default:
      return std::nullopt;
  }
}

// A simplified expression and, for integer and bool expressions, the range of its values.
struct R {
  ExprP e;
  IntInterval b;
};

class Simplifier {
 public:
  Simplifier() = default;
  explicit Simplifier(std::map<std::string, IntInterval> known) : bounds_(std::move(known)) {}

  // ---------------------------------------------------------------- statements
  StmtP stmt(const StmtP& s) {
    switch (s->kind) {
      case StmtKind::For:
        return for_loop(*s);
      case StmtKind::Store: {
        auto n = std::make_shared<Stmt>(*s);
        for (ExprP& i : n->indices) i = expr(i).e;
        n->value = expr(s->value).e;
        return n;
      }
      case StmtKind::Assign: {
        auto n = std::make_shared<Stmt>(*s);
        n->value = expr(s->value).e;
        return n;
      }
      case StmtKind::LetStmt:
        return let_stmt(*s);
      case StmtKind::DeclareVar: {
        auto n = std::make_shared<Stmt>(*s);
        n->value = expr(s->value).e;
        mutable_.insert(s->name);
        n->body = stmt(s->body);
        return n;
      }
      case StmtKind::Block: {
        std::vector<StmtP> out;
        for (const StmtP& b : s->stmts) {
          StmtP x = stmt(b);
          if (!is_no_op(*x)) out.push_back(x);
        }
        return make_block(std::move(out));
      }
      case StmtKind::IfThenElse: {
        R c = expr(s->value);
        if (c.b.is_point()) {
          if (c.b.lo) return stmt(s->body);
          return s->else_body ? stmt(s->else_body) : make_block({});
        }
        StmtP t = stmt(s->body);
        StmtP f = s->else_body ? stmt(s->else_body) : nullptr;
        if (f && is_no_op(*f)) f = nullptr;
        if (is_no_op(*t) && !f) return t;
        return make_if(c.e, t, f);
      }
      case StmtKind::Allocate: {
        auto n = std::make_shared<Stmt>(*s);
        n->body = stmt(s->body);
        return n;
      }
      case StmtKind::Prefetch: {
        auto n = std::make_shared<Stmt>(*s);
        n->indices[0] = expr(s->indices[0]).e;
        return n;
      }
      case StmtKind::Kernel: {
        auto n = std::make_shared<Stmt>(*s);
        n->body = stmt(s->body);
        return n;
      }
      case StmtKind::Barrier:
      case StmtKind::ThreadAllReduce:
        return s;
    }
    return s;
  }

  // ---------------------------------------------------------------- expressions
  R expr(const ExprP& e) {
    R r = expr_raw(e);
    // An integer expression with a single possible value is that value.
    if (is_int_type(r.e->type) && r.b.is_point() && r.e->kind != ExprKind::IntImm)
      r.e = int_imm(r.e->type, r.b.lo);
    return r;
  }

 private:
  StmtP for_loop(const Stmt& s) {
    R mn = expr(s.min);
    R ext = expr(s.extent);
    if (ext.b.hi <= 0) return make_block({});
    if (ext.b.is_point() && ext.b.lo == 1 && s.for_kind == ForKind::Serial) {
      // One iteration: the variable is the minimum (bound once when the minimum could change).
      if (!has_load(*mn.e) && !uses_mutable(*mn.e)) return body_with(s.name, mn, s.body);
      return stmt(make_let(s.name, mn.e, s.body));
    }
    i128 hi = i128(mn.b.hi) + ext.b.hi - 1;
    bounds_[s.name] = {mn.b.lo, hi > INT64_MAX ? INT64_MAX : static_cast<int64_t>(hi)};
    StmtP body = stmt(s.body);
    bounds_.erase(s.name);
    if (is_no_op(*body)) return body;
    auto n = std::make_shared<Stmt>(s);
    n->min = mn.e;
    n->extent = ext.e;
    n->body = body;
    return n;
  }

  StmtP let_stmt(const Stmt& s) {
    R v = expr(s.value);
    bool alias = v.e->kind == ExprKind::Var && !mutable_.count(v.e->name);
    if (is_const(*v.e) || alias) return body_with(s.name, v, s.body);
    bounds_[s.name] = v.b;
    StmtP body = stmt(s.body);
    bounds_.erase(s.name);
    bool used = false;
    for_each_expr(*body, [&](const Expr& x) { used |= x.kind == ExprKind::Var && x.name == s.name; });
    if (!used) return body;
    return make_let(s.name, v.e, body);
  }

  // `body` simplified with `name` replaced by `value` (its binding dropped).
  StmtP body_with(const std::string& name, const R& value, const StmtP& body) {
    subst_[name] = value.e;
    bounds_[name] = value.b;
    StmtP out = stmt(body);
    subst_.erase(name);
    bounds_.erase(name);
    return out;
  }

  bool uses_mutable(const Expr& e) const {
    bool found = false;
    for_each_expr(e, [&](const Expr& x) { found |= x.kind == ExprKind::Var && mutable_.count(x.name); });
    return found;
  }

  static R leaf(ExprP e) { return {e, IntInterval::of_type(e->type)}; }

  R expr_raw(const ExprP& e) {
    switch (e->kind) {
      case ExprKind::IntImm:
        return {e, IntInterval::point(e->int_value)};
      case ExprKind::FloatImm:
        return leaf(e);
      case ExprKind::Var: {
        if (auto it = subst_.find(e->name); it != subst_.end()) return {it->second, bounds_.at(e->name)};
        if (auto it = bounds_.find(e->name); it != bounds_.end()) return {e, it->second};
        return leaf(e);
      }
      case ExprKind::Load: {
        std::vector<ExprP> idx;
        for (const ExprP& i : e->args) idx.push_back(expr(i).e);
        auto n = std::make_shared<Expr>(*with_args(*e, std::move(idx)));
        if (n->pad) n->pad = expr(n->pad).e;
        return leaf(n);
      }
      case ExprKind::Unary:
        return unary_expr(*e, expr(e->args[0]));
      case ExprKind::Binary:
        return mk(e->bin_op, expr(e->args[0]), expr(e->args[1]));
      case ExprKind::Select: {
        R c = expr(e->args[0]);
        if (c.b.is_point()) return expr(e->args[c.b.lo ? 1 : 2]);
        R a = expr(e->args[1]), b = expr(e->args[2]);
        if (equal(a.e, b.e)) return a;
        return {select(c.e, a.e, b.e), hull(a.b, b.b)};
      }
      case ExprKind::Call:
        return call_expr(*e);
      case ExprKind::Cast:
        return cast_expr(*e, expr(e->args[0]));
      case ExprKind::Reduce: {
        auto n = std::make_shared<Expr>(*e);
        for (Range& r : n->ranges) {
          r.min = expr(r.min).e;
          r.extent = expr(r.extent).e;
        }
        n->args = {expr(e->args[0]).e};
        return leaf(n);
      }
    }
    return leaf(e);
  }

  // ---- unary
  R unary_expr(const Expr& e, R a) {
    if (e.un_op == UnOp::Not) {
      if (a.b.is_point()) return {bool_imm(!a.b.lo), IntInterval::point(!a.b.lo)};
      if (a.e->kind == ExprKind::Unary && a.e->un_op == UnOp::Not) return expr(a.e->args[0]);
      return {unary(UnOp::Not, a.e), {0, 1}};
    }
    ScalarType t = e.type;
    if (a.e->kind == ExprKind::Unary && a.e->un_op == UnOp::Neg) return expr(a.e->args[0]);
    if (ir::is_float(t)) {
      if (a.e->kind == ExprKind::FloatImm) return leaf(float_imm(t, -a.e->float_value));
      return leaf(unary(UnOp::Neg, a.e));
    }
    return arith(unary(UnOp::Neg, a.e), neg(a.b));
  }

  // An integer +, -, *, negation with its exact range w: no_wrap when it fits the type.
  static R arith(ExprP node, Wide w) {
    auto n = std::make_shared<Expr>(*node);
    if (auto b = fit(w.lo, w.hi, n->type)) {
      n->no_wrap = true;
      return {n, *b};
    }
    n->no_wrap = false;
    return {n, IntInterval::of_type(n->type)};
  }

  // ---- binary: rewrites, folding, bounds
  R mk(BinOp op, R a, R b) {
    ScalarType ot = a.e->type;  // operand type
    if (ir::is_float(ot)) return float_binary(op, a, b);
    ScalarType t = (is_comparison(op) || op == BinOp::And || op == BinOp::Or) ? ScalarType::Bool : ot;
    const IntInterval& A = a.b;
    const IntInterval& B = b.b;
    auto konst = [](const R& x) { return x.e->kind == ExprKind::IntImm; };
    auto c_of = [](const R& x) { return x.e->int_value; };
    auto imm = [&](int64_t v) {
      return R{int_imm(t, ir::wrap_int(t, v)), IntInterval::point(ir::wrap_int(t, v))};
    };
    auto plain = [&](IntInterval bounds) { return R{binary(op, a.e, b.e), bounds}; };

    switch (op) {
      case BinOp::Add: {
        if (konst(a) && !konst(b)) std::swap(a, b);
        if (konst(b) && c_of(b) == 0) return a;
        if (konst(a) && konst(b)) return imm(static_cast<int64_t>(uint64_t(c_of(a)) + uint64_t(c_of(b))));
        // (x + c1) + c2 -> x + (c1 + c2)
        if (konst(b) && is_add_const(a.e))
          return mk(BinOp::Add, expr(a.e->args[0]),
                    imm(static_cast<int64_t>(uint64_t(a.e->args[1]->int_value) + uint64_t(c_of(b)))));
        // a + (x - a) -> x, (x - a) + a -> x
        if (b.e->kind == ExprKind::Binary && b.e->bin_op == BinOp::Sub && equal(b.e->args[1], a.e))
          return expr(b.e->args[0]);
        if (a.e->kind == ExprKind::Binary && a.e->bin_op == BinOp::Sub && equal(a.e->args[1], b.e))
          return expr(a.e->args[0]);
        // a + (x + -a) -> x  (the form a - b takes when b is a constant)
        if (konst(a) && is_add_const(b.e) && uint64_t(b.e->args[1]->int_value) + uint64_t(c_of(a)) == 0)
          return expr(b.e->args[0]);
        return arith(binary(op, a.e, b.e), add(A, B));
      }
      case BinOp::Sub: {
        if (konst(b) && c_of(b) == 0) return a;
        if (konst(a) && konst(b)) return imm(static_cast<int64_t>(uint64_t(c_of(a)) - uint64_t(c_of(b))));
        if (equal(a.e, b.e)) return imm(0);
        // x - c -> x + (-c), so that constants gather (signed types, where -c is a plain value)
        if (konst(b) && ir::is_signed(t) && c_of(b) != ir::int_min(t))
          return mk(BinOp::Add, a, imm(-c_of(b)));
        // (x + y) - y -> x, (y + x) - y -> x: a box's extent, (lo + 3) - lo, becomes a constant
        if (a.e->kind == ExprKind::Binary && a.e->bin_op == BinOp::Add && equal(a.e->args[1], b.e))
          return expr(a.e->args[0]);
        if (a.e->kind == ExprKind::Binary && a.e->bin_op == BinOp::Add && equal(a.e->args[0], b.e))
          return expr(a.e->args[1]);
        // min(x, y) - x -> min(0, y - x) on indices (max too): the extent of a guarded tail's box,
        // (min(lo, last) - lo) + 1, is then bounded by 1 without knowing lo.
        if (t == ScalarType::Index && a.e->kind == ExprKind::Binary &&
            (a.e->bin_op == BinOp::Min || a.e->bin_op == BinOp::Max))
          for (int side : {0, 1})
            if (equal(a.e->args[side], b.e))
              return expr(binary(a.e->bin_op, index_imm(0), binary(BinOp::Sub, a.e->args[1 - side], b.e)));
        return arith(binary(op, a.e, b.e), sub(A, B));
      }
      case BinOp::Mul: {
        if (konst(a) && !konst(b)) std::swap(a, b);
        if (konst(a) && konst(b)) return imm(static_cast<int64_t>(uint64_t(c_of(a)) * uint64_t(c_of(b))));
        if (konst(b) && c_of(b) == 1) return a;
        if (konst(b) && c_of(b) == 0) return imm(0);
        if (konst(b) && a.e->kind == ExprKind::Binary && a.e->bin_op == BinOp::Mul &&
            a.e->args[1]->kind == ExprKind::IntImm)
          return mk(BinOp::Mul, expr(a.e->args[0]),
                    imm(static_cast<int64_t>(uint64_t(a.e->args[1]->int_value) * uint64_t(c_of(b)))));
        return arith(binary(op, a.e, b.e), mul(A, B));
      }
      case BinOp::Div:
      case BinOp::TruncDiv:
        return division(op, a, b, t);
      case BinOp::Mod:
      case BinOp::TruncMod:
        return modulo(op, a, b, t);
      case BinOp::Min:
      case BinOp::Max: {
        bool is_min = op == BinOp::Min;
        if (A.hi <= B.lo) return is_min ? a : b;
        if (B.hi <= A.lo) return is_min ? b : a;
        if (equal(a.e, b.e)) return a;
        IntInterval r = is_min ? IntInterval{std::min(A.lo, B.lo), std::min(A.hi, B.hi)}
                            : IntInterval{std::max(A.lo, B.lo), std::max(A.hi, B.hi)};
        return plain(r);
      }
      case BinOp::Eq:
      case BinOp::Ne:
      case BinOp::Lt:
      case BinOp::Le:
      case BinOp::Gt:
      case BinOp::Ge: {
        std::optional<bool> v = compare(op, A, B);
        if (!v && equal(a.e, b.e)) v = op == BinOp::Eq || op == BinOp::Le || op == BinOp::Ge;
        if (v) return {bool_imm(*v), IntInterval::point(*v)};
        return plain({0, 1});
      }
      case BinOp::And:
      case BinOp::Or: {
        bool is_and = op == BinOp::And;
        // false && x, true || x: decided by a; x && true, x || false: b.
        if (A.is_point()) return (A.lo != 0) == is_and ? b : a;
        if (B.is_point()) return (B.lo != 0) == is_and ? a : b;
        if (equal(a.e, b.e)) return a;
        return plain({0, 1});
      }
      case BinOp::BitAnd:
      case BinOp::BitOr:
      case BinOp::BitXor: {
        if (konst(a) && konst(b)) {
          int64_t x = c_of(a), y = c_of(b);
          return imm(op == BinOp::BitAnd ? (x & y) : op == BinOp::BitOr ? (x | y) : (x ^ y));
        }
        IntInterval r = IntInterval::of_type(t);
        if (op == BinOp::BitAnd && (A.nonnegative() || B.nonnegative()))
          r = {0, A.nonnegative() && B.nonnegative() ? std::min(A.hi, B.hi) : A.nonnegative() ? A.hi : B.hi};
        else if (A.nonnegative() && B.nonnegative()) {
          int64_t m = std::max(A.hi, B.hi);
          int64_t p = 1;
          while (p <= m && p < (int64_t{1} << 62)) p <<= 1;
          r = {0, p <= m ? INT64_MAX : p - 1};
          if (!r.within(IntInterval::of_type(t))) r = IntInterval::of_type(t);
        }
        return plain(r);
      }
      case BinOp::Shl:
      case BinOp::Shr: {
        if (!konst(b) || c_of(b) < 0 || c_of(b) > 63) return plain(IntInterval::of_type(t));
        int k = static_cast<int>(c_of(b));
        if (k == 0) return a;
        if (op == BinOp::Shr) {
          if (konst(a)) return imm(c_of(a) >> k);
          return plain({A.lo >> k, A.hi >> k});
        }
        if (konst(a)) return imm(static_cast<int64_t>(uint64_t(c_of(a)) << k));
        if (k <= 62) {
          Wide w = mul(A, IntInterval::point(int64_t{1} << k));
          if (auto r = fit(w.lo, w.hi, t)) return plain(*r);
        }
        return plain(IntInterval::of_type(t));
      }
    }
    return plain(IntInterval::of_type(t));
  }

  static bool is_add_const(const ExprP& e) {
    return e->kind == ExprKind::Binary && e->bin_op == BinOp::Add && e->args[1]->kind == ExprKind::IntImm;
  }

  static std::optional<bool> compare(BinOp op, const IntInterval& A, const IntInterval& B) {
    switch (op) {
      case BinOp::Lt:
        if (A.hi < B.lo) return true;
        if (A.lo >= B.hi) return false;
        break;
      case BinOp::Le:
        if (A.hi <= B.lo) return true;
        if (A.lo > B.hi) return false;
        break;
      case BinOp::Gt:
        return compare(BinOp::Lt, B, A);
      case BinOp::Ge:
        return compare(BinOp::Le, B, A);
      case BinOp::Eq:
        if (A.is_point() && B.is_point() && A.lo == B.lo) return true;
        if (A.hi < B.lo || B.hi < A.lo) return false;
        break;
      case BinOp::Ne:
        if (auto eq = compare(BinOp::Eq, A, B)) return !*eq;
        break;
      default:
        break;
    }
    return std::nullopt;
  }

  R division(BinOp op, R a, R b, ScalarType t) {
    const IntInterval &A = a.b, &B = b.b;
    auto imm = [&](i128 v) {
      int64_t w = ir::wrap_int(t, static_cast<int64_t>(v));
      return R{int_imm(t, w), IntInterval::point(w)};
    };
    bool floor = op == BinOp::Div;
    if (B.is_point() && B.lo == 1) return a;
    if (B.is_point() && B.lo != 0) {
      int64_t c = B.lo;
      if (A.is_point()) return imm(floor ? floor_div(A.lo, c) : i128(A.lo) / c);
      if (c > 0) {
        i128 lo = floor ? floor_div(A.lo, c) : i128(A.lo) / c;
        i128 hi = floor ? floor_div(A.hi, c) : i128(A.hi) / c;
        IntInterval r{static_cast<int64_t>(lo), static_cast<int64_t>(hi)};
        // Floor division by 2^k is an arithmetic shift; by anything else of a non-negative value,
        // C's division.
        if (floor && is_power_of_two(c)) return {binary(BinOp::Shr, a.e, int_imm(t, log2_of(c))), r};
        if (floor && A.nonnegative()) return {binary(BinOp::TruncDiv, a.e, b.e), r};
        return {binary(op, a.e, b.e), r};
      }
    }
    if (A.nonnegative() && B.lo > 0) {
      IntInterval r{A.lo / B.hi, A.hi / B.lo};
      return {binary(BinOp::TruncDiv, a.e, b.e), r};
    }
    return {binary(op, a.e, b.e), IntInterval::of_type(t)};
  }

  R modulo(BinOp op, R a, R b, ScalarType t) {
    const IntInterval &A = a.b, &B = b.b;
    bool floor = op == BinOp::Mod;
    if (B.is_point() && (B.lo == 1 || B.lo == -1)) return {int_imm(t, 0), IntInterval::point(0)};
    if (B.is_point() && B.lo != 0) {
      int64_t c = B.lo;
      if (A.is_point()) {
        int64_t v = static_cast<int64_t>(floor ? floor_mod(A.lo, c) : i128(A.lo) % c);
        return {int_imm(t, v), IntInterval::point(v)};
      }
      if (c > 0) {
        if (A.nonnegative() && A.hi < c) return a;
        IntInterval r{0, A.nonnegative() ? std::min(A.hi, c - 1) : c - 1};
        if (floor && is_power_of_two(c)) return {binary(BinOp::BitAnd, a.e, int_imm(t, c - 1)), r};
        if (A.nonnegative()) return {binary(BinOp::TruncMod, a.e, b.e), r};
        return {binary(op, a.e, b.e), floor ? r : IntInterval{-(c - 1), c - 1}};
      }
    }
    if (A.nonnegative() && B.lo > 0) return {binary(BinOp::TruncMod, a.e, b.e), IntInterval{0, B.hi - 1}};
    return {binary(op, a.e, b.e), IntInterval::of_type(t)};
  }

  R float_binary(BinOp op, R a, R b) {
    ScalarType t = a.e->type;
    bool ka = a.e->kind == ExprKind::FloatImm, kb = b.e->kind == ExprKind::FloatImm;
    if (ka && kb) {
      double x = a.e->float_value, y = b.e->float_value;
      auto f = [&](double v) { return leaf(float_imm(t, ir::round_to_type(t, v))); };
      auto boolean = [](bool v) { return R{bool_imm(v), IntInterval::point(v)}; };
      switch (op) {
        case BinOp::Add:
          return f(x + y);
        case BinOp::Sub:
          return f(x - y);
        case BinOp::Mul:
          return f(x * y);
        case BinOp::Div:
          return f(x / y);
        case BinOp::Min:
          return f(fmin_nan(x, y));
        case BinOp::Max:
          return f(fmax_nan(x, y));
        case BinOp::Eq:
          return boolean(x == y);
        case BinOp::Ne:
          return boolean(x != y);
        case BinOp::Lt:
          return boolean(x < y);
        case BinOp::Le:
          return boolean(x <= y);
        case BinOp::Gt:
          return boolean(x > y);
        case BinOp::Ge:
          return boolean(x >= y);
        default:
          break;
      }
    }
    // Exact identities only (x + 0.0 is not x for x = -0.0).
    if (kb && b.e->float_value == 1.0 && (op == BinOp::Mul || op == BinOp::Div)) return a;
    if (ka && a.e->float_value == 1.0 && op == BinOp::Mul) return b;
    if (kb && b.e->float_value == 0.0 && !std::signbit(b.e->float_value) && op == BinOp::Sub) return a;
    ExprP n = binary(op, a.e, b.e);
    return leaf(n);
  }

  // ---- calls and casts
  R call_expr(const Expr& e) {
    std::vector<R> args;
    for (const ExprP& a : e.args) args.push_back(expr(a));
    std::vector<ExprP> xs;
    bool all_float_const = true, all_int_const = true;
    for (const R& r : args) {
      xs.push_back(r.e);
      all_float_const &= r.e->kind == ExprKind::FloatImm;
      all_int_const &= r.e->kind == ExprKind::IntImm;
    }
    ScalarType t = e.type;
    switch (e.intrinsic) {
      case Intrinsic::MirrorIndex: {
        IntInterval n = args[1].b;
        if (n.is_point() && args[0].b.within({0, n.lo - 1})) return args[0];
        return {call(e.intrinsic, t, xs), {0, std::max<int64_t>(n.hi - 1, 0)}};
      }
      case Intrinsic::Abs:
        if (!ir::is_float(t)) {
          const IntInterval& A = args[0].b;
          if (A.nonnegative()) return args[0];
          i128 m = std::max(-i128(A.lo), i128(A.hi));
          auto r = fit(A.hi < 0 ? -i128(A.hi) : 0, m, t);
          return {call(e.intrinsic, t, xs), r ? *r : IntInterval::of_type(t)};
        }
        break;
      case Intrinsic::Rdmulh:
      case Intrinsic::Rshift:
      case Intrinsic::Requant:
        if (all_int_const) {
          int32_t a = static_cast<int32_t>(xs[0]->int_value);
          int64_t y = xs[1]->int_value;
          if (e.intrinsic == Intrinsic::Rdmulh)
            return expr(int_imm(t, ir::quant::rdmulh(a, static_cast<int32_t>(y))));
          if (e.intrinsic == Intrinsic::Rshift && y >= 0 && y <= 31)
            return expr(int_imm(t, ir::quant::rshift(a, static_cast<int>(y))));
          if (e.intrinsic == Intrinsic::Requant && xs[2]->int_value >= -31 && xs[2]->int_value <= 31)
            return expr(int_imm(
                t, ir::quant::requant(a, static_cast<int32_t>(y), static_cast<int>(xs[2]->int_value))));
        }
        return {call(e.intrinsic, t, xs), IntInterval::of_type(t)};
      default:
        break;
    }
    if (ir::is_float(t) && all_float_const) {
      std::vector<double> v;
      for (const ExprP& x : xs) v.push_back(x->float_value);
      if (auto r = fold_float_call(e.intrinsic, v)) return leaf(float_imm(t, ir::round_to_type(t, *r)));
    }
    return leaf(call(e.intrinsic, t, xs));
  }

  R cast_expr(const Expr& e, R a) {
    ScalarType to = e.type, from = a.e->type;
    if (to == from) return a;
    if (to == ScalarType::Bool) {
      if (a.e->kind == ExprKind::FloatImm) {
        double x = a.e->float_value;
        bool v = x != 0 && x == x;
        return {bool_imm(v), IntInterval::point(v)};
      }
      if (!ir::is_float(from)) {
        if (std::optional<bool> v = compare(BinOp::Ne, a.b, IntInterval::point(0)))
          return {bool_imm(*v), IntInterval::point(*v)};
      }
      return {cast(to, a.e, e.saturate), {0, 1}};
    }
    if (ir::is_float(to)) {
      if (a.e->kind == ExprKind::FloatImm)
        return leaf(float_imm(to, ir::round_to_type(to, a.e->float_value)));
      if (a.e->kind == ExprKind::IntImm)
        return leaf(float_imm(to, ir::round_to_type(to, static_cast<double>(a.e->int_value))));
      return leaf(cast(to, a.e, e.saturate));
    }
    // to an integer type
    if (a.e->kind == ExprKind::FloatImm) return expr(int_imm(to, float_to_int(a.e->float_value, to)));
    if (ir::is_float(from)) return {cast(to, a.e, e.saturate), IntInterval::of_type(to)};
    IntInterval range = IntInterval::of_type(to);
    if (a.b.within(range)) {
      // Value-preserving: a constant needs no cast at all.
      if (a.e->kind == ExprKind::IntImm) return {int_imm(to, a.e->int_value), a.b};
      return {cast(to, a.e, e.saturate), a.b};
    }
    if (a.e->kind == ExprKind::IntImm) {
      int64_t v = e.saturate ? ir::saturate_int(to, a.e->int_value) : ir::wrap_int(to, a.e->int_value);
      return {int_imm(to, v), IntInterval::point(v)};
    }
    IntInterval r = range;
    if (e.saturate) r = {std::clamp(a.b.lo, range.lo, range.hi), std::clamp(a.b.hi, range.lo, range.hi)};
    return {cast(to, a.e, e.saturate), r};
  }

  std::map<std::string, IntInterval> bounds_;  // integer variables in scope
  std::map<std::string, ExprP> subst_;      // variables replaced by their (constant) value
  std::set<std::string> mutable_;           // DeclareVar variables: no fixed value
};

}  // namespace

void simplify(Func& f) {
  Simplifier s;
  f.body = s.stmt(f.body);
}

ExprP simplify(const ExprP& e) {
  Simplifier s;
  return s.expr(e).e;
}

ExprP simplify(const ExprP& e, const std::map<std::string, IntInterval>& known) {
  Simplifier s(known);
  return s.expr(e).e;
}

IntInterval value_range(const ExprP& e, const std::map<std::string, IntInterval>& known) {
  Simplifier s(known);
  return s.expr(e).b;
}

StmtP simplify(const StmtP& st) {
  Simplifier s;
  return s.stmt(st);
}

}  // namespace ekb::lir
