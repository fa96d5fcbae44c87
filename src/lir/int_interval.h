// Integer intervals for the loop IR's bounds reasoning (simplify): the closed range of values an
// integer or bool expression can take. Arithmetic is exact (128-bit), so a caller can tell whether
// an operation can leave its type's range, i.e. whether it wraps.
#pragma once
#include <cstdint>
#include <optional>

#include "ir/types.h"

namespace ekb::lir {

using i128 = __int128;

struct IntInterval {
  int64_t lo = INT64_MIN, hi = INT64_MAX;

  static IntInterval of_type(ir::ScalarType t);  // the type's whole range; bool is [0, 1]
  static IntInterval point(int64_t v) { return {v, v}; }
  bool is_point() const { return lo == hi; }
  bool within(const IntInterval& o) const { return o.lo <= lo && hi <= o.hi; }
  bool nonnegative() const { return lo >= 0; }
};

IntInterval hull(const IntInterval& a, const IntInterval& b);
// [lo, hi] when it fits in type t, nullopt otherwise (the operation may wrap).
std::optional<IntInterval> fit(i128 lo, i128 hi, ir::ScalarType t);

// Exact results of interval arithmetic (before wrapping).
struct Wide {
  i128 lo, hi;
};
Wide add(const IntInterval& a, const IntInterval& b);
Wide sub(const IntInterval& a, const IntInterval& b);
Wide mul(const IntInterval& a, const IntInterval& b);
Wide neg(const IntInterval& a);

// Floor division and floor modulo of exact integers (b != 0).
i128 floor_div(i128 a, i128 b);
i128 floor_mod(i128 a, i128 b);

}  // namespace ekb::lir
