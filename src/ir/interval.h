// Closed intervals of doubles for the verifier's index-bounds proofs. Doubles serve both integer
// index arithmetic (exact below 2^53, far beyond any extent) and the float expressions that
// compute indices (bilinear resize: cast(i32, floor(f32 expr))). Every operation is sound: the
// result contains every value the operation can produce from values in its operands; when that
// cannot be bounded (NaN, division by an interval containing zero) the result is `full()`.
#pragma once
#include <string>

#include "ir/types.h"

namespace ekb::ir {

struct Interval {
  double lo = 0, hi = 0;

  static Interval point(double v) { return {v, v}; }
  static Interval full();                   // [-inf, inf]
  static Interval of_type(ScalarType t);    // an integer type's range, [0, 1] for bool, full for floats
  bool empty() const { return lo > hi; }    // only from intersect(): an unreachable value
  bool is_point() const { return lo == hi; }
  bool within(double a, double b) const { return lo >= a && hi <= b; }
};

Interval hull(Interval a, Interval b);
Interval intersect(Interval a, Interval b);

Interval neg(Interval a);
Interval add(Interval a, Interval b);
Interval sub(Interval a, Interval b);
Interval mul(Interval a, Interval b);
Interval div_real(Interval a, Interval b);   // float division
Interval div_floor(Interval a, Interval b);  // integer floor division (a zero divisor is skipped)
Interval mod_floor(Interval a, Interval b);  // integer floor modulo: the sign of the divisor
Interval shl(Interval a, Interval b);
Interval shr(Interval a, Interval b);        // arithmetic: floor(a / 2^b)
Interval bit_and(Interval a, Interval b, ScalarType t);
Interval bit_or(Interval a, Interval b, ScalarType t);  // also xor
Interval min_iv(Interval a, Interval b);  // elementwise min of two values
Interval max_iv(Interval a, Interval b);
Interval abs_iv(Interval a);

// f applied to both ends: f must be monotone (non-decreasing) on the interval.
template <class F>
Interval monotone(Interval a, F f) {
  return {f(a.lo), f(a.hi)};
}
Interval fix_nan(Interval a);  // NaN ends make the interval full

// Integer arithmetic wraps: a result outside the type's range may be anything in it.
Interval wrap_to(Interval a, ScalarType t);
// Clamps the ends to the type's range (sat, float->int cast); truncates toward zero first.
Interval saturate_to(Interval a, ScalarType t);

std::string format_bound(double v);      // "63", "-inf"
std::string format_interval(Interval a); // "[-1, 64]"

}  // namespace ekb::ir
