// Integer intervals for the loop IR's bounds reasoning (simplify): the closed range of values an
// integer or bool expression can take. Arithmetic is exact (128-bit), so a caller can tell whether
// an operation can leave its type's range, i.e. whether it wraps.
#pragma once
#include <cstdint>
#include <optional>

#include "ir/types.h"

namespace ekb::lir {

using i128 = __int128;

struct Interval {
  int64_t lo = INT64_MIN, hi = INT64_MAX;

  static Interval of_type(ir::ScalarType t);  // the type's whole range; bool is [0, 1]
  static Interval point(int64_t v) { return {v, v}; }
  bool is_point() const { return lo == hi; }
  bool within(const Interval& o) const { return o.lo <= lo && hi <= o.hi; }
  bool nonnegative() const { return lo >= 0; }
};

Interval hull(const Interval& a, const Interval& b);
// [lo, hi] when it fits in type t, nullopt otherwise (the operation may wrap).
std::optional<Interval> fit(i128 lo, i128 hi, ir::ScalarType t);

// Exact results of interval arithmetic (before wrapping).
struct Wide {
  i128 lo, hi;
};
Wide add(const Interval& a, const Interval& b);
Wide sub(const Interval& a, const Interval& b);
Wide mul(const Interval& a, const Interval& b);
Wide neg(const Interval& a);

// Floor division and floor modulo of exact integers (b != 0).
i128 floor_div(i128 a, i128 b);
i128 floor_mod(i128 a, i128 b);

}  // namespace ekb::lir
