// Closed intervals of doubles for the verifier's index-bounds proofs. Doubles serve both integer
// index arithmetic (exact below 2^53, far beyond any extent) and the float expressions that
// compute indices (bilinear resize: cast(i32, floor(f32 expr))). Every operation is sound: the
// result contains every value the operation can produce from values in its operands; when that
// cannot be bounded (NaN, division by an interval containing zero) the result is `full()`.
#pragma once
#include <string>

#include "ir/types.h"

namespace ekb::ir {

struct RealInterval {
  double lo = 0, hi = 0;

  static RealInterval point(double v) { return {v, v}; }
  static RealInterval full();                 // [-inf, inf]
  static RealInterval of_type(ScalarType t);  // an integer type's range, [0, 1] for bool, full for floats
  bool empty() const { return lo > hi; }      // only from intersect(): an unreachable value
  bool is_point() const { return lo == hi; }
  bool within(double a, double b) const { return lo >= a && hi <= b; }
};

RealInterval hull(RealInterval a, RealInterval b);
RealInterval intersect(RealInterval a, RealInterval b);

RealInterval neg(RealInterval a);
RealInterval add(RealInterval a, RealInterval b);
RealInterval sub(RealInterval a, RealInterval b);
RealInterval mul(RealInterval a, RealInterval b);
RealInterval div_real(RealInterval a, RealInterval b);   // float division
RealInterval div_floor(RealInterval a, RealInterval b);  // integer floor division (a zero divisor is skipped)
RealInterval mod_floor(RealInterval a, RealInterval b);  // integer floor modulo: the sign of the divisor
RealInterval shl(RealInterval a, RealInterval b);
RealInterval shr(RealInterval a, RealInterval b);        // arithmetic: floor(a / 2^b)
RealInterval bit_and(RealInterval a, RealInterval b, ScalarType t);
RealInterval bit_or(RealInterval a, RealInterval b, ScalarType t);  // also xor
RealInterval min_iv(RealInterval a, RealInterval b);  // elementwise min of two values
RealInterval max_iv(RealInterval a, RealInterval b);
RealInterval abs_iv(RealInterval a);

// f applied to both ends: f must be monotone (non-decreasing) on the interval.
template <class F>
RealInterval monotone(RealInterval a, F f) {
  return {f(a.lo), f(a.hi)};
}
RealInterval fix_nan(RealInterval a);  // NaN ends make the interval full

// Integer arithmetic wraps: a result outside the type's range may be anything in it.
RealInterval wrap_to(RealInterval a, ScalarType t);
// Clamps the ends to the type's range (sat, float->int cast); truncates toward zero first.
RealInterval saturate_to(RealInterval a, ScalarType t);

std::string format_bound(double v);      // "63", "-inf"
std::string format_interval(RealInterval a); // "[-1, 64]"

}  // namespace ekb::ir
