// Deterministic input generation: the same (instance, seed) gives the same values on every
// platform and standard library (a specified PRNG and specified conversions; no std::*_distribution).
//
// Stream: input number k (0-based among the pattern's inputs) draws from xoshiro256** whose state is
// four consecutive SplitMix64 outputs starting from
//     stream_seed(seed, k) = splitmix64_mix(splitmix64_mix(seed) ^ (0xD1B54A32D192ED03 * (k + 1)))
// so each input is independent of the others (adding an input does not change the earlier ones).
//
// Values, per the input's declared domain (docs/IR.md), element by element in row-major order:
//  - `in [lo, hi]`, float types: lo + (hi - lo) * u with u = (next() >> 11) * 2^-53, rounded to the
//    nearest value of the declared type (f16/bf16/f32), then nudged one step inward if rounding
//    left [lo, hi]. So a kernel reading the typed buffer sees exactly the value the reference uses.
//  - `in [lo, hi]`, integer types: uniform over the integers of [ceil(lo), floor(hi)] clipped to the
//    type's range (unbiased: Lemire's multiply-shift with rejection,
//    high 64 bits of next() * range).
//  - no domain: floats uniform [-1, 1]; i8 [-128, 127]; u8 [0, 255]; i16, i32, i64 [-1000, 1000];
//    bool 0/1 with probability 1/2 (integer rule on [0, 1]).
//  - `spd` (float, shape [..., n, n]): per matrix, B with entries uniform [-1, 1] (row-major), then
//    A = B * B^T / n + I, rounded to the type (symmetric: a[i][j] and a[j][i] are the same rounded
//    value). Eigenvalues lie in about [1, 2.3]: well conditioned, not diagonal.
// A tensor is never all-zero (when its domain holds a nonzero value) and, with two or more
// elements, never all-equal (when its domain holds two values): such a draw is redrawn from the
// continuing stream, up to 100 times, then its first two elements are set to the domain's ends.
#pragma once
#include <cstdint>
#include <vector>

#include "ir/instance.h"
#include "ir/tensor_data.h"

namespace ekb::ir {

// SplitMix64 finalizer (Steele, Lea, Flood 2014).
uint64_t splitmix64_mix(uint64_t z);

// xoshiro256** 1.0 (Blackman, Vigna), seeded from one 64-bit value through SplitMix64.
class Rng {
 public:
  explicit Rng(uint64_t seed);
  uint64_t next();
  double uniform01();                           // [0, 1), 53 random bits
  int64_t uniform_int(int64_t lo, int64_t hi);  // inclusive, unbiased (Lemire 2019)

 private:
  uint64_t s_[4];
};

uint64_t input_stream_seed(uint64_t seed, uint64_t input_index);

// The values a non-`spd` input takes by the rules above: its declared domain (or the type's
// default), float ends rounded inward into the type. Throws on an empty or infinite domain.
struct ValueRange {
  bool is_float = false;
  double flo = -1, fhi = 1;  // float types: ends, already representable in the type
  int64_t ilo = 0, ihi = 0;  // integer and bool types
};
ValueRange input_value_range(const Instance& inst, const TensorInstance& t);

// One TensorData per `input`, in declaration order, with the declared types and shapes.
std::vector<TensorData> generate_inputs(const Instance& inst, uint64_t seed);

}  // namespace ekb::ir
