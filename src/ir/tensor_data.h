// Tensor values as the reference interpreter sees them, and the exact conversions between those
// values and the bytes of a buffer in a tensor's declared element type.
//
// Floating-point elements are held as double whatever their declared type (the reference computes
// in f64, docs/IR.md); integer and bool elements are held as exact int64 values (bool: 0 or 1).
#pragma once
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
