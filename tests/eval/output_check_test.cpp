#include "eval/output_check.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>

#include "eval/poison.h"

namespace ekb::eval {
namespace {

using ir::ScalarType;

ir::TensorData floats(std::vector<double> v) {
  ir::TensorData t(ScalarType::F32, {static_cast<int64_t>(v.size())});
  t.f = std::move(v);
  return t;
}

double rms(const ir::TensorData& t) {
  double s = 0;
  for (double v : t.f) s += v * v;
  return std::sqrt(s / static_cast<double>(t.f.size()));
}

TEST(OutputCheck, AcceptsRoundingAndRejectsAConstant) {
  ir::TensorData want = floats({1.0, -2.0, 3.0, 0.5});
  std::vector<float> got = {1.0001f, -2.0f, 3.0f, 0.5f};
  EXPECT_EQ(check_output("y", reinterpret_cast<uint8_t*>(got.data()), want, rms(want), 0).error, ErrorKind::None);
  std::vector<float> constant(4, 0.625f);  // the mean
  OutputVerdict v = check_output("y", reinterpret_cast<uint8_t*>(constant.data()), want, rms(want), 0);
  EXPECT_EQ(v.error, ErrorKind::Mismatch);
  // The worst element (furthest outside its allowed error) is named, then the first.
  EXPECT_NE(v.message.find("output 'y' at [1]: got 0.625, expected -2"), std::string::npos) << v.message;
  EXPECT_NE(v.message.find("4 of 4 elements differ, the worst shown, the first at [0]"), std::string::npos) << v.message;
}

TEST(OutputCheck, AMismatchNamesTheWorstElementAndEveryVerdictSaysHowCloseItCame) {
  ir::TensorData want = floats({1.0, 2.0, 3.0, 4.0});  // allowed: 1e-3 * |want| + 1e-4 * rms (2.74)
  std::vector<float> got = {1.01f, 2.0f, 3.0f, 4.5f};   // [0] 7.9x its allowed error, [3] 117x
  OutputVerdict v = check_output("y", reinterpret_cast<uint8_t*>(got.data()), want, rms(want), 0);
  EXPECT_EQ(v.error, ErrorKind::Mismatch);
  EXPECT_NE(v.message.find("output 'y' at [3]: got 4.5, expected 4 (|error| 0.5 > allowed 0.00427"),
            std::string::npos) << v.message;
  EXPECT_NE(v.message.find("117x the allowed error); 2 of 4 elements differ, the worst shown, the first at [0]"),
            std::string::npos) << v.message;
  EXPECT_NEAR(v.max_error_ratio, 117.0, 0.5);

  std::vector<float> close = {1.0005f, 2.0f, 3.0f, 4.0f};  // passes, using 39% of [0]'s allowed error
  OutputVerdict pass = check_output("y", reinterpret_cast<uint8_t*>(close.data()), want, rms(want), 0);
  EXPECT_EQ(pass.error, ErrorKind::None);
  EXPECT_GT(pass.max_error_ratio, 0.3);
  EXPECT_LT(pass.max_error_ratio, 0.5);

  std::vector<float> nan_out = {1.0f, std::nanf(""), 3.0f, 4.0f};
  EXPECT_TRUE(std::isinf(check_output("y", reinterpret_cast<uint8_t*>(nan_out.data()), want, rms(want), 0).max_error_ratio));
}

TEST(OutputCheck, NaNAndInfinityPositionsMustMatch) {
  const double inf = std::numeric_limits<double>::infinity(), nan = std::nan("");
  ir::TensorData want = floats({nan, inf, 1.0});
  std::vector<float> ok = {std::nanf(""), static_cast<float>(inf), 1.0f};
  EXPECT_EQ(check_output("y", reinterpret_cast<uint8_t*>(ok.data()), want, 1.0, 0).error, ErrorKind::None);
  std::vector<float> finite_for_nan = {0.0f, static_cast<float>(inf), 1.0f};
  EXPECT_EQ(check_output("y", reinterpret_cast<uint8_t*>(finite_for_nan.data()), want, 1.0, 0).error, ErrorKind::Mismatch);
  std::vector<float> nan_for_finite = {std::nanf(""), static_cast<float>(inf), std::nanf("")};
  EXPECT_EQ(check_output("y", reinterpret_cast<uint8_t*>(nan_for_finite.data()), want, 1.0, 0).error, ErrorKind::Mismatch);
}

TEST(OutputCheck, PoisonLeftInPlaceIsUnwrittenWithEitherPattern) {
  ir::TensorData want(ScalarType::F32, {2, 3});
  want.f = {1, 2, 3, 4, 5, 6};
  for (int p = 0; p < kPoisonPatterns; ++p) {
    std::vector<float> got(6);
    fill_poison(ScalarType::F32, p, reinterpret_cast<uint8_t*>(got.data()), 6);
    got[0] = 1, got[1] = 2, got[2] = 3, got[3] = 4;
    OutputVerdict v = check_output("y", reinterpret_cast<uint8_t*>(got.data()), want, rms(want), p);
    EXPECT_EQ(v.error, ErrorKind::UnwrittenOutput);
    EXPECT_NE(v.message.find("2 of 6 elements were not written"), std::string::npos) << v.message;
    EXPECT_NE(v.message.find("the first at [1, 1]"), std::string::npos) << v.message;
  }
}

TEST(OutputCheck, IntegersAreExactAndASentinelEqualToTheAnswerIsFine) {
  ir::TensorData want(ScalarType::I8, {3});
  int8_t sentinel;
  uint64_t bits = poison_bits(ScalarType::I8, 0);
  std::memcpy(&sentinel, &bits, 1);
  want.i = {sentinel, 5, -7};
  std::vector<int8_t> got(3);
  fill_poison(ScalarType::I8, 0, reinterpret_cast<uint8_t*>(got.data()), 3);
  got[1] = 5, got[2] = -7;  // element 0 untouched, but the sentinel is the right answer
  EXPECT_EQ(check_output("q", reinterpret_cast<uint8_t*>(got.data()), want, 0, 0).error, ErrorKind::None);
  got[2] = -6;
  OutputVerdict v = check_output("q", reinterpret_cast<uint8_t*>(got.data()), want, 0, 0);
  EXPECT_EQ(v.error, ErrorKind::Mismatch);
  EXPECT_NE(v.message.find("integer outputs must be exact"), std::string::npos);
}

TEST(OutputCheck, HalfPrecisionUsesItsTolerance) {
  ir::TensorData want(ScalarType::F16, {2});
  want.f = {1.0, 100.0};
  std::vector<uint16_t> got = {ir::f16_bits(1.004), ir::f16_bits(100.0)};
  EXPECT_EQ(check_output("h", reinterpret_cast<uint8_t*>(got.data()), want, 70.0, 0).error, ErrorKind::None);
  got[0] = ir::f16_bits(2.0);
  EXPECT_EQ(check_output("h", reinterpret_cast<uint8_t*>(got.data()), want, 70.0, 0).error, ErrorKind::Mismatch);
}

TEST(Poison, PatternsAreQuietNaNsThatDiffer) {
  for (ScalarType t : {ScalarType::F16, ScalarType::BF16, ScalarType::F32, ScalarType::F64})
    EXPECT_NE(poison_bits(t, 0), poison_bits(t, 1));
  float a, b;
  uint32_t ua = static_cast<uint32_t>(poison_bits(ScalarType::F32, 0));
  uint32_t ub = static_cast<uint32_t>(poison_bits(ScalarType::F32, 1));
  std::memcpy(&a, &ua, 4);
  std::memcpy(&b, &ub, 4);
  EXPECT_TRUE(std::isnan(a));
  EXPECT_TRUE(std::isnan(b));
  EXPECT_TRUE(ua & 0x00400000u) << "quiet";
  EXPECT_NE(ua, 0x7FC00000u) << "not the default NaN that arithmetic produces";
  double d = ir::f16_value(static_cast<uint16_t>(poison_bits(ScalarType::F16, 1)));
  EXPECT_TRUE(std::isnan(d));
}

TEST(FormatIndex, RowMajor) {
  EXPECT_EQ(format_index({2, 3, 4}, 0), "[0, 0, 0]");
  EXPECT_EQ(format_index({2, 3, 4}, 23), "[1, 2, 3]");
  EXPECT_EQ(format_index({5}, 4), "[4]");
}

}  // namespace
}  // namespace ekb::eval
