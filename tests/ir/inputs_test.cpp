// Deterministic input generation, the PRNG, and the reduced-precision float conversions.
#include "ir/inputs.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>

#include "ir_test_util.h"

namespace ekb::ir {
namespace {

using testing::load;

std::string pat(const std::string& name, const std::string& body, const std::string& workloads) {
  return "pattern " + name + " {\n  level operator\n  source \"test\"\n" + body + "\n}\n" + workloads;
}

const std::string kMixed = pat("nn.mixed", R"(
  types T
  params N
  input  a : T[N, N] in [-0.1, 0.1]
  input  b : i8[N]
  input  c : u8[N]
  input  d : i32[N]
  input  e : T[N]
  input  f : i32[N] in [-3, 5]
  input  g : bool[N]
  input  s : T[N, N] spd
  output y : T[N]
  y[i] = a[i, 0] + e[i] + s[i, i] + cast(T, b[i]) + cast(T, c[i]) + cast(T, d[i]) + cast(T, f[i])
       + select(g[i], 1.0, 0.0)
)", "workload w32 { N = 16, T = f32 }\nworkload w16 { N = 16, T = f16 }\n"
    "workload wb { N = 16, T = bf16 }\nworkload w64 { N = 16, T = f64 }\n");

TEST(Rng, SplitMix64AndXoshiroAreTheSpecifiedGenerators) {
  // The first SplitMix64 output for state 0 (reference implementation by Vigna).
  EXPECT_EQ(splitmix64_mix(0x9E3779B97F4A7C15ull), 0xE220A8397B1DCDAFull);
  Rng a(42), b(42), c(43);
  for (int k = 0; k < 100; ++k) {
    uint64_t x = a.next();
    EXPECT_EQ(x, b.next());
    EXPECT_NE(x, c.next());
  }
  Rng r(7);
  for (int k = 0; k < 10000; ++k) {
    int64_t v = r.uniform_int(-3, 5);
    EXPECT_GE(v, -3);
    EXPECT_LE(v, 5);
    double u = r.uniform01();
    EXPECT_GE(u, 0.0);
    EXPECT_LT(u, 1.0);
  }
}

TEST(Float16, RoundingAndBits) {
  EXPECT_EQ(f16_bits(1.0), 0x3C00);
  EXPECT_EQ(f16_bits(-2.0), 0xC000);
  EXPECT_EQ(f16_bits(65504.0), 0x7BFF);
  EXPECT_EQ(f16_bits(65520.0), 0x7C00);             // rounds to infinity
  EXPECT_EQ(f16_bits(1.0 + std::ldexp(1, -11)), 0x3C00);      // tie to even
  EXPECT_EQ(f16_bits(1.0 + 3 * std::ldexp(1, -11)), 0x3C02);  // tie to even (up)
  EXPECT_EQ(f16_bits(std::ldexp(1, -24)), 0x0001);  // smallest subnormal
  EXPECT_EQ(f16_bits(std::ldexp(1, -26)), 0x0000);  // below half of it
  EXPECT_EQ(f16_value(0x3555), 0.333251953125);
  EXPECT_EQ(round_to_type(ScalarType::F16, 0.1), 0.0999755859375);
  EXPECT_EQ(bf16_bits(1.0), 0x3F80);
  EXPECT_EQ(bf16_value(0x3F80), 1.0);
  EXPECT_EQ(round_to_type(ScalarType::BF16, 1.0 + std::ldexp(1, -8)), 1.0);  // tie to even
  EXPECT_EQ(round_to_type(ScalarType::BF16, 1.0 + 3 * std::ldexp(1, -8)), 1.0 + std::ldexp(1, -6));
  EXPECT_EQ(round_to_type(ScalarType::F32, 0.1), static_cast<double>(0.1f));
  // The bits agree with the rounding (round_to_type, computed apart from them) at every midpoint
  // between two halves, one double-ulp either side of it, and on random values of every scale.
  for (uint32_t b = 0; b + 1 < 0x7C00; ++b)
    for (double sign : {1.0, -1.0}) {
      const double mid = sign * (f16_value(static_cast<uint16_t>(b)) + f16_value(static_cast<uint16_t>(b + 1))) / 2;
      for (double v : {mid, std::nextafter(mid, 0.0), std::nextafter(mid, sign * 1e9)})
        ASSERT_EQ(f16_value(f16_bits(v)), round_to_type(ScalarType::F16, v)) << v;
    }
  Rng rng(7);
  for (int k = 0; k < 100000; ++k) {
    const double v = std::ldexp(rng.uniform01() - 0.5, static_cast<int>(rng.next() % 48) - 28);
    ASSERT_EQ(f16_value(f16_bits(v)), round_to_type(ScalarType::F16, v)) << v;
  }
  for (uint32_t b = 0; b < 0x7C00; ++b) {  // every finite positive half round-trips
    double v = f16_value(static_cast<uint16_t>(b));
    ASSERT_EQ(f16_bits(v), b) << b;
    if (b > 0) {
      ASSERT_EQ(next_down(ScalarType::F16, v), f16_value(static_cast<uint16_t>(b - 1)));
    }
  }
}

// The vectorizable float conversions agree with the double ones on every finite half, on every
// midpoint between two halves and a float-ulp either side of it, and on a stride through all
// floats below the largest half; bf16 the same on a stride through the finite floats.
TEST(Float16, FloatConversionsAgreeWithTheDoubleOnes) {
  for (uint32_t b = 0; b < 0x10000; ++b) {
    if ((b & 0x7C00) == 0x7C00) continue;  // infinities and NaNs: out of their contract
    const auto h = static_cast<uint16_t>(b);
    ASSERT_EQ(static_cast<double>(f16_to_float(h)), f16_value(h)) << std::hex << b;
    ASSERT_EQ(float_to_f16(f16_to_float(h)), h == 0x8000 ? 0x8000 : h) << std::hex << b;
  }
  auto same_f16 = [](float v) {
    ASSERT_EQ(float_to_f16(v), f16_bits(v)) << v;
    ASSERT_EQ(float_to_f16(-v), f16_bits(-v)) << v;
  };
  for (uint32_t b = 0; b + 1 < 0x7C00; ++b) {
    const float mid = static_cast<float>((f16_value(static_cast<uint16_t>(b)) + f16_value(static_cast<uint16_t>(b + 1))) / 2);
    same_f16(mid);
    same_f16(std::nextafter(mid, 0.0f));
    same_f16(std::nextafter(mid, 1e9f));
  }
  for (uint32_t u = 0; u < 0x477FF000u; u += 997) same_f16(std::bit_cast<float>(u));
  EXPECT_EQ(float_to_f16(70000.0f), 0x7BFF);  // saturates where the double routine gives infinity
  for (uint32_t u = 0; u < 0x7F7F0000u; u += 9973) {
    const float v = std::bit_cast<float>(u);
    ASSERT_EQ(float_to_bf16(v), bf16_bits(v)) << v;
    ASSERT_EQ(float_to_bf16(-v), bf16_bits(-v)) << v;
    ASSERT_EQ(static_cast<double>(bf16_to_float(bf16_bits(v))), bf16_value(bf16_bits(v)));
  }
}

TEST(TensorBytes, RoundTripThroughDeclaredTypes) {
  TensorData h(ScalarType::F16, {3});
  h.f = {0.5, -1.25, 0.0999755859375};
  auto bytes = to_bytes(h);
  ASSERT_EQ(bytes.size(), 6u);
  EXPECT_EQ(bytes[0], 0x00);
  EXPECT_EQ(bytes[1], 0x38);
  TensorData back = from_bytes(ScalarType::F16, {3}, bytes.data(), bytes.size());
  EXPECT_EQ(back.f, h.f);
  TensorData q(ScalarType::I8, {2});
  q.i = {-1, 127};
  auto qb = to_bytes(q);
  EXPECT_EQ(qb, (std::vector<uint8_t>{0xFF, 0x7F}));
  EXPECT_EQ(from_bytes(ScalarType::I8, {2}, qb.data(), qb.size()).i, q.i);
}

TEST(Inputs, SameSeedSameBytesDifferentSeedsDiffer) {
  auto l = load(kMixed, "w16");
  ASSERT_TRUE(l.inst) << l.diags;
  auto a = generate_inputs(*l.inst, 5);
  auto b = generate_inputs(*l.inst, 5);
  auto c = generate_inputs(*l.inst, 6);
  ASSERT_EQ(a.size(), 8u);
  for (size_t k = 0; k < a.size(); ++k) {
    EXPECT_EQ(to_bytes(a[k]), to_bytes(b[k])) << k;
    EXPECT_NE(to_bytes(a[k]), to_bytes(c[k])) << k;
  }
  // Each input has its own stream: inputs differ from each other even with equal domains.
  EXPECT_NE(a[0].f, a[7].f);
}

TEST(Inputs, ValuesLieInTheirDomainsAndAreRepresentable) {
  for (const char* w : {"w32", "w16", "wb", "w64"}) {
    auto l = load(kMixed, w);
    ASSERT_TRUE(l.inst) << l.diags;
    ScalarType t = l.inst->tensors[0].type;
    auto in = generate_inputs(*l.inst, 1);
    for (double v : in[0].f) {
      EXPECT_GE(v, -0.1) << w;
      EXPECT_LE(v, 0.1) << w;
      EXPECT_EQ(round_to_type(t, v), v) << w;
    }
    for (double v : in[4].f) {  // default float domain
      EXPECT_GE(v, -1.0);
      EXPECT_LE(v, 1.0);
      EXPECT_EQ(round_to_type(t, v), v);
    }
    // f16 bytes decode to exactly the values the reference uses.
    auto bytes = to_bytes(in[0]);
    EXPECT_EQ(from_bytes(t, in[0].shape, bytes.data(), bytes.size()).f, in[0].f);
    for (int64_t v : in[1].i) EXPECT_TRUE(v >= -128 && v <= 127);
    for (int64_t v : in[2].i) EXPECT_TRUE(v >= 0 && v <= 255);
    for (int64_t v : in[3].i) EXPECT_TRUE(v >= -1000 && v <= 1000);
    bool lo = false, hi = false;
    for (int64_t v : in[5].i) {
      EXPECT_TRUE(v >= -3 && v <= 5);
      lo = lo || v == -3;
      hi = hi || v == 5;
    }
    for (int64_t v : in[6].i) EXPECT_TRUE(v == 0 || v == 1);
  }
  // Integer ranges are inclusive: both ends occur over enough draws.
  Rng r(1);
  bool lo = false, hi = false;
  for (int k = 0; k < 1000; ++k) {
    int64_t v = r.uniform_int(-3, 5);
    lo = lo || v == -3;
    hi = hi || v == 5;
  }
  EXPECT_TRUE(lo && hi);
}

TEST(Inputs, SpdIsSymmetricWithPositiveCholeskyPivots) {
  for (const char* w : {"w32", "w16", "w64"}) {
    auto l = load(kMixed, w);
    ASSERT_TRUE(l.inst) << l.diags;
    auto in = generate_inputs(*l.inst, 9);
    const TensorData& s = in[7];
    int64_t n = s.shape[0];
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < n; ++j) EXPECT_EQ(s.f[i * n + j], s.f[j * n + i]);
    std::vector<double> L(static_cast<size_t>(n * n), 0.0);
    for (int64_t j = 0; j < n; ++j) {
      double d = s.f[j * n + j];
      for (int64_t k = 0; k < j; ++k) d -= L[j * n + k] * L[j * n + k];
      ASSERT_GT(d, 0.5) << w << " pivot " << j;  // eigenvalues are >= ~1
      L[j * n + j] = std::sqrt(d);
      for (int64_t i = j + 1; i < n; ++i) {
        double v = s.f[i * n + j];
        for (int64_t k = 0; k < j; ++k) v -= L[i * n + k] * L[j * n + k];
        L[i * n + j] = v / L[j * n + j];
      }
    }
    // Not diagonal: off-diagonal entries are of order 1/sqrt(n).
    double off = 0;
    for (int64_t i = 1; i < n; ++i) off = std::max(off, std::fabs(s.f[i * n]));
    EXPECT_GT(off, 0.01);
  }
}

TEST(Inputs, NeverAllZeroOrAllEqual) {
  std::string text = pat("nn.tiny", R"(
  params N
  input  one  : i32[1] in [0, 1]
  input  two  : bool[2]
  input  pair : i8[2] in [0, 1]
  input  f    : f32[2] in [0, 0.5]
  output y    : i32[1]
  y[i] = one[i] + select(two[1], 1, 0) + cast(i32, pair[1]) + cast(i32, f[1])
)", "workload w { N = 1 }\n");
  auto l = load(text);
  ASSERT_TRUE(l.inst) << l.diags;
  for (uint64_t seed = 0; seed < 200; ++seed) {
    auto in = generate_inputs(*l.inst, seed);
    EXPECT_EQ(in[0].i[0], 1);
    EXPECT_NE(in[1].i[0], in[1].i[1]);
    EXPECT_NE(in[2].i[0], in[2].i[1]);
    EXPECT_NE(in[3].f[0], in[3].f[1]);
  }
}

}  // namespace
}  // namespace ekb::ir
