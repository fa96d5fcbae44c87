// lower_definitions: pure definitions over the full extent, updates as ordered loops with free
// left-hand-side variables innermost, temps allocated, params and lets as constants, explicit
// casts where an integer mixes with index.
#include "lower/lower_definitions.h"

#include <gtest/gtest.h>

#include "lower_test_util.h"

namespace ekb::lower::testing {
namespace {

TEST(LowerDefinitions, PureDefinitionsUpdatesAndTemps) {
  auto l = lower_text(pattern(kFourStages, "M = 3, N = 4"), "lower_definitions");
  EXPECT_EQ(l.body,
            "allocate t: f32[4] in global\n"
            "for j in [0, +4) {\n"
            "  t[j] = (b[j] * 2.0:f32)\n"
            "}\n"
            "for i in [0, +3) {\n"
            "  for j_1 in [0, +4) {\n"
            "    y[i, j_1] = (x[i, j_1] + t[j_1])\n"
            "  }\n"
            "}\n"
            "for i_1 in [1, +(3 - 1)) {\n"  // the ordered update; j is free: innermost, full extent
            "  for j_2 in [0, +4) {\n"
            "    y[i_1, j_2] = (y[(i_1 - 1), j_2] + y[i_1, j_2])\n"
            "  }\n"
            "}\n"
            "for i_2 in [0, +3) {\n"
            "  c[i_2] = (cast<i32>(i_2) + 1:i32)\n"
            "}\n");
  ASSERT_EQ(l.func.buffers.size(), 5u);  // inputs, outputs, then temps
  EXPECT_EQ(l.func.buffers[0].name, "x");
  EXPECT_EQ(l.func.buffers[2].name, "y");
  EXPECT_EQ(l.func.buffers[4].role, BufferRole::Temp);
  ASSERT_EQ(l.func.params.size(), 2u);
  EXPECT_EQ(l.func.params[1].value, 4);
}

TEST(LowerDefinitions, IntegerMixedWithIndexIsCastAndLetsAreConstants) {
  auto l = lower_text(pattern(R"(
  params N
  let K = N * 2
  let alpha = 1.5
  input  v : i32[N]
  output y : i64[N]
  output z : f32[N]
  y[i] = v[i] + K
  z[i] = cast(f32, v[i]) * alpha
)",
                              "N = 3"),
                      "lower_definitions");
  EXPECT_EQ(l.body,
            "for i in [0, +3) {\n"
            "  y[i] = cast<i64>((cast<index>(v[i]) + 6))\n"
            "}\n"
            "for i_1 in [0, +3) {\n"
            "  z[i_1] = (cast<f32>(v[i_1]) * 1.5:f32)\n"
            "}\n");
}

TEST(LowerDefinitions, NestedUpdateLoopsAndReductionsStayHighLevel) {
  auto l = lower_text(pattern(R"(
  params N
  input  a : f32[N, N]
  output x : f32[N]
  x[i] = a[i, i]
  for i in 0..N {
    for j in 0..i: x[i] = x[i] - a[i, j] * x[j]
    x[i] = x[i] / max(k in 0..N: a[i, k])
  }
)",
                              "N = 2"),
                      "lower_definitions");
  EXPECT_EQ(l.body,
            "for i in [0, +2) {\n"
            "  x[i] = a[i, i]\n"
            "}\n"
            "for i_1 in [0, +(2 - 0)) {\n"
            "  for j in [0, +(i_1 - 0)) {\n"
            "    x[i_1] = (x[i_1] - (a[i_1, j] * x[j]))\n"
            "  }\n"
            "  x[i_1] = (x[i_1] / max(k in [0, +(2 - 0)): a[i_1, k]))\n"
            "}\n");
}

TEST(LowerDefinitions, VariableNamesAvoidLibraryNames) {
  // The verifier rejects keywords; names of C library functions are legal IR names but would
  // shadow the functions the emitted code calls.
  auto l = lower_text(pattern(R"(
  params N
  input  k : f32[N]
  output y : f32[N]
  y[exp] = k[exp] + sum(sqrtf in 0..N: exp(k[sqrtf]))
)",
                              "N = 2"),
                      "lower_definitions");
  EXPECT_EQ(l.body,
            "for exp_1 in [0, +2) {\n  y[exp_1] = (k[exp_1] + sum(sqrtf_1 in [0, +(2 - 0)): "
            "exp(k[sqrtf_1])))\n}\n");
}

}  // namespace
}  // namespace ekb::lower::testing
