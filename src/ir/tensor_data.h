// Tensor values as the reference interpreter sees them, and the exact conversions between those
// values and the bytes of a buffer in a tensor's declared element type.
//
// Floating-point elements are held as double whatever their declared type (the reference computes
// in f64, docs/IR.md); integer and bool elements are held as exact int64 values (bool: 0 or 1).
#pragma once
#include <bit>
#include <cstdint>
#include <vector>

#include "ir/types.h"

namespace ekb::ir {

struct TensorData {
  ScalarType type = ScalarType::F32;
  std::vector<int64_t> shape;
  std::vector<double> f;   // float types only, row-major
  std::vector<int64_t> i;  // integer and bool types only, row-major

  TensorData() = default;
  // Zero-filled tensor of the given type and shape.
  TensorData(ScalarType t, std::vector<int64_t> s);

  int64_t num_elements() const;
  bool is_float() const { return ir::is_float(type); }
  // Element `k` (row-major) as a double, whatever the type.
  double as_double(int64_t k) const { return is_float() ? f[k] : static_cast<double>(i[k]); }
};

// ---- reduced-precision floating point (IEEE binary16, bfloat16) ----
// Round a double to the nearest value of the format (ties to even; overflow gives +-inf; NaN stays
// NaN) and return its bit pattern.
uint16_t f16_bits(double v);
uint16_t bf16_bits(double v);
double f16_value(uint16_t bits);
double bf16_value(uint16_t bits);

// The same conversions from and to float, for finite values only (no NaN or infinity in, none out
// but a float beyond the format's largest value, which saturates), in branch-free integer and float
// steps the compiler turns into vector code: for loops over whole tensors (fresh inputs before
// every timed call), where the double routines above cost more than the kernels.
inline float f16_to_float(uint16_t bits) {
  // Exponent and fraction moved to float's positions and rebiased by a multiplication, which
  // also normalizes subnormals exactly.
  const float magnitude = std::bit_cast<float>(static_cast<uint32_t>(bits & 0x7FFFu) << 13) * 0x1p112f;
  return std::bit_cast<float>(std::bit_cast<uint32_t>(magnitude) | (static_cast<uint32_t>(bits & 0x8000u) << 16));
}
inline uint16_t float_to_f16(float v) {
  const uint32_t u = std::bit_cast<uint32_t>(v);
  const uint32_t sign = (u >> 16) & 0x8000u;
  uint32_t m = u & 0x7FFFFFFFu;
  m = m < 0x477FE000u ? m : 0x477FE000u;  // |v| >= 65520 saturates to 65504 (no infinity)
  // Normal results: the fraction rounded to 10 bits (ties to even), the exponent rebiased.
  const uint32_t normal = (m + 0xC8000FFFu + ((m >> 13) & 1u)) >> 13;
  // Subnormal results (|v| < 2^-14): adding 0.5 puts the rounded value, to nearest even, in the
  // low bits of the sum's fraction.
  const uint32_t subnormal = std::bit_cast<uint32_t>(std::bit_cast<float>(m) + 0.5f) - 0x3F000000u;
  return static_cast<uint16_t>(sign | (m < 0x38800000u ? subnormal : normal));
}
inline float bf16_to_float(uint16_t bits) { return std::bit_cast<float>(static_cast<uint32_t>(bits) << 16); }
inline uint16_t float_to_bf16(float v) {
  const uint32_t u = std::bit_cast<uint32_t>(v);
  return static_cast<uint16_t>((u + 0x7FFFu + ((u >> 16) & 1u)) >> 16);
}

// The nearest value of a float type (f16, bf16, f32: round to nearest even; f64: unchanged).
// For non-float types the value is returned unchanged.
double round_to_type(ScalarType t, double v);
// The next representable value of float type t above / below v (v must be representable in t).
double next_up(ScalarType t, double v);
double next_down(ScalarType t, double v);

// The buffer a kernel sees: num_elements() * byte_size(type) bytes, little-endian, in the declared
// type. Float values are rounded to the type (round to nearest even); integers are wrapped to it.
std::vector<uint8_t> to_bytes(const TensorData& t);
// The inverse: decode a buffer of the declared type into exact values.
TensorData from_bytes(ScalarType type, std::vector<int64_t> shape, const uint8_t* data, size_t size);

}  // namespace ekb::ir
