// widen_half_precision: f16/bf16 loaded to f32, computed in f32, rounded when stored to a half
// buffer; half temps kept in f32 unless asked to keep them half.
#include "lower/widen_half_precision.h"

#include <gtest/gtest.h>

#include "lower_test_util.h"

namespace ekb::lower::testing {
namespace {

const char* kProgram = R"(
  params N
  input  h : f16[N]
  input  g : bf16[N]
  output s : f16[N]
  temp   t : f16[N]
  t[i] = h[i] * 2.0
  s[i] = t[i] + cast(f16, g[i])
)";

TEST(WidenHalfPrecision, LoadsWidenStoresRoundTempsStayF32) {
  auto l = lower_text(pattern(kProgram, "N = 5"), "widen_half_precision");
  EXPECT_EQ(l.body,
            "allocate t: f32[5] in global\n"
            "for i in [0, +5) {\n"
            "  t[i] = (cast<f32>(h[i]) * 2.0:f32)\n"
            "}\n"
            "for i_1 in [0, +5) {\n"
            "  s[i_1] = cast<f16>((t[i_1] + cast<f32>(g[i_1])))\n"  // the cast to f16 mid-expression is gone
            "}\n");
  EXPECT_EQ(l.func.buffer("t")->type, ScalarType::F32);
}

TEST(WidenHalfPrecision, KeepHalfTemps) {
  LowerOptions o;
  o.keep_half_temps = true;
  auto l = lower_text(pattern(kProgram, "N = 5"), "widen_half_precision", o);
  EXPECT_NE(l.body.find("allocate t: f16[5]"), std::string::npos) << l.body;
  EXPECT_NE(l.body.find("t[i] = cast<f16>((cast<f32>(h[i]) * 2.0:f32))"), std::string::npos) << l.body;
  EXPECT_NE(l.body.find("(cast<f32>(t[i_1]) + cast<f32>(g[i_1]))"), std::string::npos) << l.body;
}

TEST(WidenHalfPrecision, HalfOutputsReadByTheKernelAreComputedInAnF32Shadow) {
  auto l = lower_text(pattern(R"(
  params N
  input  x : f16[N]
  output h : f16[N]
  output y : f16[N]
  h[i] = x[i]
  for k in 0..3: h[i] = h[i] * 3.0 + 1.0
  y[i] = h[i] * 2.0
)", "N = 4"),
                      "widen_half_precision");
  EXPECT_EQ(l.body,
            "allocate h_f32: f32[4] in global\n"
            "for i in [0, +4) {\n"
            "  h_f32[i] = cast<f32>(x[i])\n"
            "}\n"
            "for k in [0, +(3 - 0)) {\n"
            "  for i_1 in [0, +4) {\n"
            "    h_f32[i_1] = ((h_f32[i_1] * 3.0:f32) + 1.0:f32)\n"  // not rounded to f16 between updates
            "  }\n"
            "}\n"
            "for i_2 in [0, +4) {\n"
            "  y[i_2] = cast<f16>((h_f32[i_2] * 2.0:f32))\n"
            "}\n"
            "for e in [0, +4) {\n"
            "  h[e] = cast<f16>(h_f32[e])\n"  // rounded once, at the end
            "}\n");
}

}  // namespace
}  // namespace ekb::lower::testing
