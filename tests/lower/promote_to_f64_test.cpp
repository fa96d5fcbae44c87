// promote_to_f64: float arithmetic feeding integer conversions, comparisons and sin/cos/tan is
// computed in f64; plain loads and everything else keep their type.
#include "lower/promote_to_f64.h"

#include <gtest/gtest.h>

#include "lower_test_util.h"

namespace ekb::lower::testing {
namespace {

TEST(PromoteToF64, ConversionsComparisonsAndAngles) {
  auto l = lower_text(pattern(R"(
  params N
  input  x : f32[N]
  input  s : f32[1]
  output q : i32[N]
  output c : i32[N]
  output b : bool[N]
  output a : f32[N]
  output y : f32[N]
  q[i] = cast(i32, round(x[i] / s[0]))
  c[i] = cast(i32, x[i])
  b[i] = x[i] * 2.0 > s[0]
  a[i] = cos(x[i] * 1000.0)
  y[i] = x[i] / s[0]
)",
                              "N = 3"),
                      "promote_to_f64");
  EXPECT_NE(l.body.find("q[i] = cast<i32>(round((cast<f64>(x[i]) / cast<f64>(s[0]))))"), std::string::npos)
      << l.body;
  EXPECT_NE(l.body.find("c[i_1] = cast<i32>(x[i_1])"), std::string::npos) << l.body;  // nothing to round
  EXPECT_NE(l.body.find("b[i_2] = ((cast<f64>(x[i_2]) * 2.0:f64) > cast<f64>(s[0]))"), std::string::npos)
      << l.body;
  EXPECT_NE(l.body.find("a[i_3] = cast<f32>(cos((cast<f64>(x[i_3]) * 1000.0:f64)))"), std::string::npos)
      << l.body;
  EXPECT_NE(l.body.find("y[i_4] = (x[i_4] / s[0])"), std::string::npos) << l.body;  // stays f32
}

TEST(PromoteToF64, CanBeTurnedOff) {
  LowerOptions o;
  o.promote_to_f64 = false;
  auto l = lower_text(pattern(R"(
  params N
  input  x : f32[N]
  output q : i32[N]
  q[i] = cast(i32, x[i] * 3.0)
)",
                              "N = 3"),
                      "", o);
  EXPECT_EQ(l.body.find("f64"), std::string::npos) << l.body;
}

}  // namespace
}  // namespace ekb::lower::testing
