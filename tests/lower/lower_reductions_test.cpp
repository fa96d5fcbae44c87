// lower_reductions: accumulators with identities, argmax's first index, nested reductions inside
// the body's loop, and reductions in a select branch computed only under its condition.
#include "lower/lower_reductions.h"

#include <gtest/gtest.h>

#include "lower_test_util.h"

namespace ekb::lower::testing {
namespace {

TEST(LowerReductions, AccumulatorsArgmaxAndGuards) {
  auto l = lower_text(pattern(R"(
  params N
  input  x : f32[N, N]
  output y : f32[N]
  output a : i64[N]
  output z : f32[N]
  y[i] = sum(k in 0..i + 1: x[i, k])
  a[i] = argmax(k in 0..N: sum(j in 0..2: x[k, j]))
  z[i] = select(i > 0, max(k in 0..N: x[i, k]), 0.0)
)",
                              "N = 4"),
                      "lower_reductions");
  EXPECT_EQ(l.body,
            "for i in [0, +4) {\n"
            "  var sum_acc: f32 = 0.0:f32\n"
            "  for k in [0, +((i + 1) - 0)) {\n"  // a triangular range
            "    sum_acc = (sum_acc + x[i, k])\n"
            "  }\n"
            "  y[i] = sum_acc\n"
            "}\n"
            "for i_1 in [0, +4) {\n"
            "  var best_max: f32 = 0.0:f32\n"
            "  var argmax: index = 0\n"
            "  for k_1 in [0, +(4 - 0)) {\n"
            "    var sum_acc_1: f32 = 0.0:f32\n"  // the nested reduction, inside the body's loop
            "    for j in [0, +(2 - 0)) {\n"
            "      sum_acc_1 = (sum_acc_1 + x[k_1, j])\n"
            "    }\n"
            "    let v: f32 = sum_acc_1\n"
            "    if ((k_1 == 0) || (v > best_max)) {\n"  // the first element, then strictly greater
            "      best_max = v\n"
            "      argmax = k_1\n"
            "    }\n"
            "  }\n"
            "  a[i_1] = cast<i64>(argmax)\n"
            "}\n"
            "for i_2 in [0, +4) {\n"
            "  var max_acc: f32 = -inf:f32\n"
            "  if (i_2 > 0) {\n"  // only where the reference evaluates it
            "    for k_2 in [0, +(4 - 0)) {\n"
            "      max_acc = max(max_acc, x[i_2, k_2])\n"
            "    }\n"
            "  }\n"
            "  z[i_2] = select((i_2 > 0), max_acc, 0.0:f32)\n"
            "}\n");
}

TEST(LowerReductions, IntegerIdentitiesAreTheTypeLimits) {
  auto l = lower_text(pattern(R"(
  params N
  input  x : i8[N]
  output y : i8[2]
  output p : i32[1]
  y[i] = select(i == 0, max(k in 0..N: x[k]), min(k in 0..N: x[k]))
  p[i] = prod(k in 0..N: cast(i32, x[k]))
)",
                              "N = 4"),
                      "lower_reductions");
  EXPECT_NE(l.body.find("var max_acc: i8 = -128:i8"), std::string::npos) << l.body;
  EXPECT_NE(l.body.find("var min_acc: i8 = 127:i8"), std::string::npos) << l.body;
  EXPECT_NE(l.body.find("if !(i == 0) {"), std::string::npos) << l.body;  // the else branch's guard
  EXPECT_NE(l.body.find("var prod_acc: i32 = 1:i32"), std::string::npos) << l.body;
}

TEST(LowerReductions, ReductionsInLogicOperandsAreGuarded) {
  auto l = lower_text(pattern(R"(
  params N
  input  x : i32[N]
  output y : bool[N]
  y[i] = x[i] != 0 && sum(k in 0..N: x[k] / x[i]) > 1
)",
                              "N = 3"),
                      "lower_reductions");
  EXPECT_NE(l.body.find("  if (x[i] != 0:i32) {\n    for k in"), std::string::npos) << l.body;
}

}  // namespace
}  // namespace ekb::lower::testing
