// Internal to the reference interpreter (interpreter.cpp): the compiled form of expressions and
// statements. Nodes hold resolved variable slots (pointers into a stable array), tensor pointers
// and strides, so evaluation does no name lookups. Float-typed expressions compile to FNode
// (values in f64), integer and bool-typed ones to INode (exact int64, wrapped to the type).
#pragma once
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "ir/ast.h"
#include "ir/quant.h"
#include "ir/types.h"

namespace ekb::ir::interp {

// Where errors are reported: "file" and "pattern/workload".
struct ErrCtx {
  std::string file;
  std::string where;
};
[[noreturn]] void raise(const ErrCtx* ctx, SourceLoc loc, const std::string& msg);

struct FNode {
  virtual ~FNode() = default;
  virtual double eval() const = 0;
};
struct INode {
  virtual ~INode() = default;
  virtual int64_t eval() const = 0;
};
using FP = std::unique_ptr<FNode>;
using IP = std::unique_ptr<INode>;

struct FConst final : FNode {
  double v;
  explicit FConst(double x) : v(x) {}
  double eval() const override { return v; }
};
struct IConst final : INode {
  int64_t v;
  explicit IConst(int64_t x) : v(x) {}
  int64_t eval() const override { return v; }
};
struct IVar final : INode {
  const int64_t* p;
  explicit IVar(const int64_t* q) : p(q) {}
  int64_t eval() const override { return *p; }
};

// ---- integer wrapping ----
enum class WK : uint8_t { None, Signed, Unsigned, Bool };
struct WrapInfo {
  WK kind = WK::None;
  int sh = 0;             // Signed: 64 - bits
  uint64_t mask = ~0ull;  // Unsigned: 2^bits - 1
  static WrapInfo of(ScalarType t) {
    WrapInfo w;
    if (t == ScalarType::Bool) {
      w.kind = WK::Bool;
    } else if (bit_width(t) >= 64) {
      w.kind = WK::None;
    } else if (is_signed(t)) {
      w.kind = WK::Signed;
      w.sh = 64 - bit_width(t);
    } else {
      w.kind = WK::Unsigned;
      w.mask = (uint64_t{1} << bit_width(t)) - 1;
    }
    return w;
  }
};
template <WK K>
inline int64_t wrap(uint64_t v, const WrapInfo& w) {
  if constexpr (K == WK::None) return static_cast<int64_t>(v);
  else if constexpr (K == WK::Signed) return static_cast<int64_t>(v << w.sh) >> w.sh;
  else if constexpr (K == WK::Unsigned) return static_cast<int64_t>(v & w.mask);
  else return v != 0;
}
inline int64_t wrap_dyn(uint64_t v, const WrapInfo& w) {
  switch (w.kind) {
    case WK::None: return wrap<WK::None>(v, w);
    case WK::Signed: return wrap<WK::Signed>(v, w);
    case WK::Unsigned: return wrap<WK::Unsigned>(v, w);
    case WK::Bool: return wrap<WK::Bool>(v, w);
  }
  return 0;
}

// ---- runtime tensors and addressing ----
struct Buf {
  std::string name;
  ScalarType type = ScalarType::F32;
  WrapInfo wrap;
  std::vector<int64_t> shape, strides;
  double* f = nullptr;   // float tensors
  int64_t* i = nullptr;  // integer and bool tensors
};

struct Term {
  const int64_t* var;
  int64_t coef;
};
inline const int64_t kZeroSlot = 0;  // the variable of an absent term

// c0 + sum(coef * var) with three or more terms (rare: most indices have at most two).
struct IAffine final : INode {
  int64_t c0 = 0;
  std::vector<Term> terms;
  int64_t eval() const override {
    uint64_t v = static_cast<uint64_t>(c0);
    for (const Term& t : terms) v += static_cast<uint64_t>(*t.var) * static_cast<uint64_t>(t.coef);
    return static_cast<int64_t>(v);
  }
};

// One index of an access: c0 + a1 * v1 + a2 * v2 when affine with at most two variables
// (absent terms use kZeroSlot), else gen's value.
struct Dim {
  int64_t c0 = 0, ext = 0, stride = 0;
  const int64_t* v1 = &kZeroSlot;
  int64_t a1 = 0;
  const int64_t* v2 = &kZeroSlot;
  int64_t a2 = 0;
  const INode* gen = nullptr;

  int64_t affine_index() const {
    return static_cast<int64_t>(static_cast<uint64_t>(c0) +
                                static_cast<uint64_t>(a1) * static_cast<uint64_t>(*v1) +
                                static_cast<uint64_t>(a2) * static_cast<uint64_t>(*v2));
  }
  int64_t index() const { return gen ? gen->eval() : affine_index(); }
  // Coefficient of variable `v` (0 when the index is not affine in it or not affine at all).
  int64_t coef_of(const int64_t* v) const {
    if (gen) return 0;
    return (v1 == v ? a1 : 0) + (v2 == v ? a2 : 0);
  }
};
struct Addr {
  const Buf* buf = nullptr;
  std::vector<Dim> dims;
  std::vector<IP> gens;  // owners of Dim::gen
  bool all_affine = true;  // no dimension needs a general index node (IAffine counts as general)

  // Flat offset; false when any index is out of bounds.
  bool offset(int64_t& off) const {
    int64_t o = 0;
    for (const Dim& d : dims) {
      int64_t x = d.index();
      if (static_cast<uint64_t>(x) >= static_cast<uint64_t>(d.ext)) return false;
      o += x * d.stride;
    }
    off = o;
    return true;
  }
  std::string describe() const;  // "x[3, -1] (shape [4, 4])", for errors
};

// ---- statements ----
struct SNode {
  virtual ~SNode() = default;
  virtual void run() const = 0;
};
using SP = std::unique_ptr<SNode>;

// `var in lo..hi`
struct RangeC {
  int64_t* var = nullptr;
  IP lo, hi;
  bool is_const = false;  // both bounds are constants klo, khi
  int64_t klo = 0, khi = 0;
  int64_t lo_value() const { return is_const ? klo : lo->eval(); }
  int64_t hi_value() const { return is_const ? khi : hi->eval(); }
};

// ---- helpers with exact IR semantics ----
inline int64_t floor_div(int64_t a, int64_t b) {  // b != 0
  if (b == -1) return static_cast<int64_t>(0 - static_cast<uint64_t>(a));  // INT64_MIN / -1 wraps
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}
inline int64_t floor_mod(int64_t a, int64_t b) {  // b != 0
  if (b == -1) return 0;
  int64_t r = a % b;
  if (r != 0 && ((r < 0) != (b < 0))) r += b;
  return r;
}
// Boundary index fix-up: 2 = edge (clamp), 3 = mirror (reflect without repeating the edge).
inline int64_t fix_index(int boundary, int64_t x, int64_t ext) {
  if (static_cast<uint64_t>(x) < static_cast<uint64_t>(ext)) return x;
  if (boundary == 2) return x < 0 ? 0 : ext - 1;
  if (ext == 1) return 0;
  int64_t p = 2 * (ext - 1);
  int64_t m = floor_mod(x, p);
  return m < ext ? m : p - m;
}
inline double fmax_nan(double a, double b) {
  if (a != a || b != b) return std::numeric_limits<double>::quiet_NaN();
  return a < b ? b : a;
}
inline double fmin_nan(double a, double b) {
  if (a != a || b != b) return std::numeric_limits<double>::quiet_NaN();
  return b < a ? b : a;
}
inline double round_half_even(double x) {
  double r = std::round(x);
  if (std::fabs(x - std::trunc(x)) == 0.5) r = 2.0 * std::round(x / 2.0);
  return r;
}
inline double floor_mod_f(double a, double b) { return a - b * std::floor(a / b); }
// float -> integer type: truncate toward zero, saturate, NaN -> 0.
inline int64_t float_to_int(double x, int64_t lo, int64_t hi) {
  if (x != x) return 0;
  double t = std::trunc(x);
  if (t <= static_cast<double>(lo)) return lo;
  if (t >= static_cast<double>(hi)) return hi;
  return static_cast<int64_t>(t);
}

}  // namespace ekb::ir::interp
