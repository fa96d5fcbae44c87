// Internal to the reference interpreter: expression node classes (see interp_nodes.h).
#pragma once
#include <cmath>
#include <memory>
#include <utility>

#include "ir/interp_nodes.h"

namespace ekb::ir::interp {

// ---------------------------------------------------------------- float nodes
struct FFromI final : FNode {
  IP a;
  explicit FFromI(IP x) : a(std::move(x)) {}
  double eval() const override { return static_cast<double>(a->eval()); }
};
struct FNeg final : FNode {
  FP a;
  explicit FNeg(FP x) : a(std::move(x)) {}
  double eval() const override { return -a->eval(); }
};

struct OpFAdd { static double f(double a, double b) { return a + b; } };
struct OpFSub { static double f(double a, double b) { return a - b; } };
struct OpFMul { static double f(double a, double b) { return a * b; } };
struct OpFDiv { static double f(double a, double b) { return a / b; } };
struct OpFMod { static double f(double a, double b) { return floor_mod_f(a, b); } };
struct OpFMin { static double f(double a, double b) { return fmin_nan(a, b); } };
struct OpFMax { static double f(double a, double b) { return fmax_nan(a, b); } };

template <class Op>
struct FBin final : FNode {
  FP a, b;
  FBin(FP x, FP y) : a(std::move(x)), b(std::move(y)) {}
  double eval() const override { return Op::f(a->eval(), b->eval()); }
};
struct FCall1 final : FNode {
  double (*fn)(double);
  FP a;
  FCall1(double (*g)(double), FP x) : fn(g), a(std::move(x)) {}
  double eval() const override { return fn(a->eval()); }
};
struct FCall2 final : FNode {
  double (*fn)(double, double);
  FP a, b;
  FCall2(double (*g)(double, double), FP x, FP y) : fn(g), a(std::move(x)), b(std::move(y)) {}
  double eval() const override { return fn(a->eval(), b->eval()); }
};
struct FFma final : FNode {
  FP a, b, c;
  FFma(FP x, FP y, FP z) : a(std::move(x)), b(std::move(y)), c(std::move(z)) {}
  double eval() const override { return std::fma(a->eval(), b->eval(), c->eval()); }
};
struct FClamp final : FNode {
  FP x, lo, hi;
  FClamp(FP a, FP b, FP c) : x(std::move(a)), lo(std::move(b)), hi(std::move(c)) {}
  double eval() const override { return fmin_nan(fmax_nan(x->eval(), lo->eval()), hi->eval()); }
};
struct FSelect final : FNode {
  IP c;
  FP a, b;
  FSelect(IP k, FP x, FP y) : c(std::move(k)), a(std::move(x)), b(std::move(y)) {}
  double eval() const override { return c->eval() ? a->eval() : b->eval(); }
};

// Loads. B: 0 plain, 1 pad, 2 edge, 3 mirror.
struct LoadBase {
  Addr addr;
  const ErrCtx* err = nullptr;
  SourceLoc loc;
  [[noreturn]] void oob() const;
  template <int B>
  int64_t fixed_offset() const {
    int64_t o = 0;
    for (const Dim& d : addr.dims) o += fix_index(B, d.index(), d.ext) * d.stride;
    return o;
  }
};
// What a node evaluates to: double for FNode, int64_t for INode.
template <class Node>
using NodeValue = decltype(std::declval<const Node&>().eval());

// A load from a tensor of the node's values.
template <class Node, int B>
struct Load final : Node, LoadBase {
  const NodeValue<Node>* data = nullptr;
  std::unique_ptr<Node> pad;
  NodeValue<Node> eval() const override {
    if constexpr (B >= 2) {
      return data[fixed_offset<B>()];
    } else {
      int64_t off;
      if (addr.offset(off)) return data[off];
      if constexpr (B == 1) return pad->eval();
      oob();
    }
  }
};
// Loads of rank R whose indices are all affine (at most two variables each): unrolled.
template <int R, int B>
struct AffineLoad : LoadBase {
  Dim d[R];
  // Offset, or -1 when out of bounds (B = 0, 1).
  int64_t off() const {
    int64_t o = 0;
    for (int r = 0; r < R; ++r) {
      int64_t x = d[r].affine_index();
      if (static_cast<uint64_t>(x) >= static_cast<uint64_t>(d[r].ext)) {
        if constexpr (B >= 2) x = fix_index(B, x, d[r].ext);
        else return -1;
      }
      o += x * d[r].stride;
    }
    return o;
  }
};
template <class Node, int R, int B>
struct LoadAffine final : Node, AffineLoad<R, B> {
  const NodeValue<Node>* data = nullptr;
  std::unique_ptr<Node> pad;
  NodeValue<Node> eval() const override {
    int64_t o = this->off();
    if (o >= 0) return data[o];
    if constexpr (B == 1) return pad->eval();
    this->oob();
  }
};

// ---------------------------------------------------------------- integer nodes
struct OpAdd { static uint64_t f(uint64_t a, uint64_t b) { return a + b; } };
struct OpSub { static uint64_t f(uint64_t a, uint64_t b) { return a - b; } };
struct OpMul { static uint64_t f(uint64_t a, uint64_t b) { return a * b; } };
struct OpAnd { static uint64_t f(uint64_t a, uint64_t b) { return a & b; } };
struct OpOr { static uint64_t f(uint64_t a, uint64_t b) { return a | b; } };
struct OpXor { static uint64_t f(uint64_t a, uint64_t b) { return a ^ b; } };
struct OpMin {
  static uint64_t f(uint64_t a, uint64_t b) {
    return static_cast<int64_t>(b) < static_cast<int64_t>(a) ? b : a;
  }
};
struct OpMax {
  static uint64_t f(uint64_t a, uint64_t b) {
    return static_cast<int64_t>(a) < static_cast<int64_t>(b) ? b : a;
  }
};

template <class Op, WK K>
struct IBin final : INode {
  IP a, b;
  WrapInfo w;
  IBin(IP x, IP y, WrapInfo wi) : a(std::move(x)), b(std::move(y)), w(wi) {}
  int64_t eval() const override {
    return wrap<K>(Op::f(static_cast<uint64_t>(a->eval()), static_cast<uint64_t>(b->eval())), w);
  }
};
struct IWrapNode final : INode {  // wrap or saturate an exact value to a type
  IP a;
  WrapInfo w;
  bool sat = false;
  int64_t lo = 0, hi = 0;
  int64_t eval() const override {
    int64_t v = a->eval();
    if (sat) return v < lo ? lo : v > hi ? hi : v;
    return wrap_dyn(static_cast<uint64_t>(v), w);
  }
};
struct INeg final : INode {
  IP a;
  WrapInfo w;
  int64_t eval() const override { return wrap_dyn(0 - static_cast<uint64_t>(a->eval()), w); }
};
struct IAbs final : INode {
  IP a;
  WrapInfo w;
  int64_t eval() const override {
    int64_t v = a->eval();
    return wrap_dyn(v < 0 ? 0 - static_cast<uint64_t>(v) : static_cast<uint64_t>(v), w);
  }
};
struct INot final : INode {
  IP a;
  int64_t eval() const override { return a->eval() == 0; }
};
struct ILogic final : INode {  // && (is_and) or ||, short-circuit
  IP a, b;
  bool is_and = true;
  int64_t eval() const override {
    if (is_and) return a->eval() != 0 && b->eval() != 0;
    return a->eval() != 0 || b->eval() != 0;
  }
};
// Division, modulo and shifts: errors carry the expression's location.
struct IChecked final : INode {
  enum Kind : uint8_t { Div, Mod, Shl, Shr } kind = Div;
  IP a, b;
  WrapInfo w;
  const ErrCtx* err = nullptr;
  SourceLoc loc;
  int64_t eval() const override {
    int64_t x = a->eval(), y = b->eval();
    switch (kind) {
      case Div:
        if (y == 0) raise(err, loc, "integer division by zero");
        return wrap_dyn(static_cast<uint64_t>(floor_div(x, y)), w);
      case Mod:
        if (y == 0) raise(err, loc, "integer modulo by zero");
        return wrap_dyn(static_cast<uint64_t>(floor_mod(x, y)), w);
      case Shl:
        if (y < 0 || y > 63) raise(err, loc, "shift amount " + std::to_string(y) + " is outside [0, 63]");
        return wrap_dyn(static_cast<uint64_t>(x) << y, w);
      case Shr:
        if (y < 0 || y > 63) raise(err, loc, "shift amount " + std::to_string(y) + " is outside [0, 63]");
        return wrap_dyn(static_cast<uint64_t>(x >> y), w);
    }
    return 0;
  }
};

enum class Cmp : uint8_t { Eq, Ne, Lt, Le, Gt, Ge };
template <Cmp C, class T>
inline bool compare(T a, T b) {
  if constexpr (C == Cmp::Eq) return a == b;
  else if constexpr (C == Cmp::Ne) return a != b;
  else if constexpr (C == Cmp::Lt) return a < b;
  else if constexpr (C == Cmp::Le) return a <= b;
  else if constexpr (C == Cmp::Gt) return a > b;
  else return a >= b;
}
template <Cmp C>
struct ICmpI final : INode {
  IP a, b;
  ICmpI(IP x, IP y) : a(std::move(x)), b(std::move(y)) {}
  int64_t eval() const override { return compare<C>(a->eval(), b->eval()); }
};
template <Cmp C>
struct ICmpF final : INode {
  FP a, b;
  ICmpF(FP x, FP y) : a(std::move(x)), b(std::move(y)) {}
  int64_t eval() const override { return compare<C>(a->eval(), b->eval()); }
};
struct ISelect final : INode {
  IP c, a, b;
  int64_t eval() const override { return c->eval() ? a->eval() : b->eval(); }
};
struct IClamp final : INode {
  IP x, lo, hi;
  int64_t eval() const override {
    int64_t v = x->eval(), l = lo->eval(), h = hi->eval();
    v = v < l ? l : v;
    return h < v ? h : v;
  }
};
struct IFma final : INode {
  IP a, b, c;
  WrapInfo w;
  int64_t eval() const override {
    return wrap_dyn(static_cast<uint64_t>(a->eval()) * static_cast<uint64_t>(b->eval()) +
                        static_cast<uint64_t>(c->eval()),
                    w);
  }
};
struct IFromF final : INode {  // float -> integer type (cast and sat alike), or -> bool
  FP a;
  int64_t lo = 0, hi = 0;
  bool to_bool = false;
  int64_t eval() const override {
    double x = a->eval();
    if (to_bool) return x != 0 && x == x;
    return float_to_int(x, lo, hi);
  }
};
struct IQuant final : INode {  // rdmulh / rshift / requant on int32
  enum Kind : uint8_t { Rdmulh, Rshift, Requant } kind = Rdmulh;
  IP a, b, c;
  const ErrCtx* err = nullptr;
  SourceLoc loc;
  int64_t eval() const override {
    int32_t x = static_cast<int32_t>(a->eval());
    int64_t y = b->eval();
    switch (kind) {
      case Rdmulh: return quant::rdmulh(x, static_cast<int32_t>(y));
      case Rshift:
        if (y < 0 || y > 31) raise(err, loc, "rshift exponent " + std::to_string(y) + " is outside [0, 31]");
        return quant::rshift(x, static_cast<int>(y));
      case Requant: {
        int64_t s = c->eval();
        if (s < -31 || s > 31) raise(err, loc, "requant shift " + std::to_string(s) + " is outside [-31, 31]");
        return quant::requant(x, static_cast<int32_t>(y), static_cast<int>(s));
      }
    }
    return 0;
  }
};

// ---------------------------------------------------------------- reductions
// Runs the nested ranges [level, end) calling f() at the innermost point.
template <class F>
inline void for_ranges(const std::vector<RangeC>& rs, size_t level, F&& f) {
  const RangeC& r = rs[level];
  int64_t lo = r.lo_value(), hi = r.hi_value();
  if (level + 1 == rs.size()) {
    for (int64_t k = lo; k < hi; ++k) {
      *r.var = k;
      f();
    }
  } else {
    for (int64_t k = lo; k < hi; ++k) {
      *r.var = k;
      for_ranges(rs, level + 1, f);
    }
  }
}

enum class Red : uint8_t { Sum, Prod, Max, Min };
template <Red R>
struct FReduce final : FNode {
  std::vector<RangeC> ranges;
  FP body;
  double eval() const override {
    double acc = R == Red::Sum ? 0.0 : R == Red::Prod ? 1.0
               : R == Red::Max ? -std::numeric_limits<double>::infinity()
                               : std::numeric_limits<double>::infinity();
    const FNode* b = body.get();
    for_ranges(ranges, 0, [&] {
      double v = b->eval();
      if constexpr (R == Red::Sum) acc += v;
      else if constexpr (R == Red::Prod) acc *= v;
      else if constexpr (R == Red::Max) acc = (v > acc || v != v) ? v : acc;
      else acc = (v < acc || v != v) ? v : acc;
    });
    return acc;
  }
};
template <Red R>
struct IReduce final : INode {
  std::vector<RangeC> ranges;
  IP body;
  WrapInfo w;
  int64_t init = 0;  // Max: the type's minimum; Min: its maximum
  int64_t eval() const override {
    uint64_t acc = R == Red::Sum ? 0 : R == Red::Prod ? 1 : static_cast<uint64_t>(init);
    const INode* b = body.get();
    for_ranges(ranges, 0, [&] {
      uint64_t v = static_cast<uint64_t>(b->eval());
      if constexpr (R == Red::Sum) acc += v;
      else if constexpr (R == Red::Prod) acc *= v;
      else if constexpr (R == Red::Max) acc = static_cast<int64_t>(v) > static_cast<int64_t>(acc) ? v : acc;
      else acc = static_cast<int64_t>(v) < static_cast<int64_t>(acc) ? v : acc;
    });
    return wrap_dyn(acc, w);
  }
};
// argmax / argmin over one range: the first index of the extreme value.
template <bool IsMax, class Body>
struct IArg final : INode {
  RangeC range;
  std::unique_ptr<Body> body;
  const ErrCtx* err = nullptr;
  SourceLoc loc;
  int64_t eval() const override {
    int64_t lo = range.lo_value(), hi = range.hi_value();
    if (lo >= hi) raise(err, loc, IsMax ? "argmax over an empty range" : "argmin over an empty range");
    *range.var = lo;
    auto best = body->eval();
    int64_t at = lo;
    for (int64_t k = lo + 1; k < hi; ++k) {
      *range.var = k;
      auto v = body->eval();
      if (IsMax ? v > best : v < best) {
        best = v;
        at = k;
      }
    }
    return at;
  }
};

// sum over ranges of a left-nested product of N factors ((f0 * f1) * f2) ...: the innermost range
// runs as a strided loop. A factor is a load whose indices are affine (its offset is linear in the
// innermost variable; points outside the load's in-bounds segment are evaluated by `slow`, the
// ordinary load node, so pad/edge/mirror keep their meaning), or an expression that does not depend
// on the innermost variable (evaluated once per run of the innermost range). Same values and
// summation order as FReduce<Sum>.
struct ProdFactor {
  bool invariant = false;
  FP node;                     // invariant: the expression; load: the ordinary load node
  Addr addr;                   // load only
  const double* data = nullptr;
  Boundary boundary = Boundary::None;
  int64_t kstride = 0;         // load only: sum over dims of coef(innermost var) * stride
};
template <int N>
struct FProdSum final : FNode {
  std::vector<RangeC> outer;  // all ranges but the innermost
  RangeC inner;
  ProdFactor f[N];
  const ErrCtx* err = nullptr;
  SourceLoc loc;
  double eval() const override {
    double acc = 0;
    if (outer.empty()) {
      run_inner(acc);
    } else {
      for_ranges(outer, 0, [&] { run_inner(acc); });
    }
    return acc;
  }
  void run_inner(double& acc) const;
};

}  // namespace ekb::ir::interp
