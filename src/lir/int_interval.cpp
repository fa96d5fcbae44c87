#include "lir/int_interval.h"

#include <algorithm>

namespace ekb::lir {

IntInterval IntInterval::of_type(ir::ScalarType t) {
  if (t == ir::ScalarType::Bool) return {0, 1};
  if (ir::is_float(t)) return {};
  return {ir::int_min(t), ir::int_max(t)};
}

IntInterval hull(const IntInterval& a, const IntInterval& b) { return {std::min(a.lo, b.lo), std::max(a.hi, b.hi)}; }

std::optional<IntInterval> fit(i128 lo, i128 hi, ir::ScalarType t) {
  IntInterval r = IntInterval::of_type(t);
  if (lo < r.lo || hi > r.hi) return std::nullopt;
  return IntInterval{static_cast<int64_t>(lo), static_cast<int64_t>(hi)};
}

Wide add(const IntInterval& a, const IntInterval& b) { return {i128(a.lo) + b.lo, i128(a.hi) + b.hi}; }
Wide sub(const IntInterval& a, const IntInterval& b) { return {i128(a.lo) - b.hi, i128(a.hi) - b.lo}; }
Wide neg(const IntInterval& a) { return {-i128(a.hi), -i128(a.lo)}; }

Wide mul(const IntInterval& a, const IntInterval& b) {
  // Products of 64-bit values fit in 128 bits.
  i128 c[4] = {i128(a.lo) * b.lo, i128(a.lo) * b.hi, i128(a.hi) * b.lo, i128(a.hi) * b.hi};
  return {*std::min_element(c, c + 4), *std::max_element(c, c + 4)};
}

i128 floor_div(i128 a, i128 b) {
  i128 q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}

i128 floor_mod(i128 a, i128 b) { return a - floor_div(a, b) * b; }

}  // namespace ekb::lir
