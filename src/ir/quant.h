// The IR's quantization intrinsics with exact gemmlowp / TFLite semantics (docs/IR.md), on int32
// values. Shared by the reference interpreter, tests and code generators.
#pragma once
#include <cstdint>
#include <limits>

namespace ekb::ir::quant {

// gemmlowp SaturatingRoundingDoublingHighMul: (a * b * 2 + 2^31) >> 32 with rounding half away
// from zero; the only overflow, INT32_MIN * INT32_MIN, saturates to INT32_MAX.
inline int32_t rdmulh(int32_t a, int32_t b) {
  if (a == b && a == std::numeric_limits<int32_t>::min()) return std::numeric_limits<int32_t>::max();
  int64_t ab = static_cast<int64_t>(a) * static_cast<int64_t>(b);
  int64_t nudge = ab >= 0 ? (int64_t{1} << 30) : (1 - (int64_t{1} << 30));
  // C++ division truncates toward zero, as gemmlowp relies on.
  return static_cast<int32_t>((ab + nudge) / (int64_t{1} << 31));
}

// gemmlowp RoundingDivideByPOT: x / 2^exponent rounded to nearest, ties away from zero.
// `exponent` must be in [0, 31].
inline int32_t rshift(int32_t x, int exponent) {
  const int32_t mask = static_cast<int32_t>((int64_t{1} << exponent) - 1);
  const int32_t remainder = x & mask;
  const int32_t threshold = (mask >> 1) + (x < 0 ? 1 : 0);
  return (x >> exponent) + (remainder > threshold ? 1 : 0);
}

// TFLite MultiplyByQuantizedMultiplier(x, quantized_multiplier, shift). The left shift wraps at 32
// bits (TFLite's int32 multiply; well-formed models never overflow it). `shift` must be in
// [-31, 31].
inline int32_t requant(int32_t x, int32_t multiplier, int shift) {
  const int left_shift = shift > 0 ? shift : 0;
  const int right_shift = shift > 0 ? 0 : -shift;
  const int32_t shifted = static_cast<int32_t>(
      static_cast<uint32_t>(x) * (static_cast<uint32_t>(1) << left_shift));
  return rshift(rdmulh(shifted, multiplier), right_shift);
}

}  // namespace ekb::ir::quant
