// Which vectorized loops the C emitter prints as explicit SIMD code (codegen/simd_loop.h), and
// what it prints; tests/codegen/scheduled_simd_test.cpp reads the assembly, the schedule tests
// and tests/codegen/schedule_property_test.cpp check the results against the reference.
#include "codegen/simd_loop.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "codegen/c_emitter.h"
#include "native_test_util.h"

namespace ekb::codegen {
namespace {

using namespace lir;

ExprP idx(const std::string& v) { return var(v, ScalarType::Index); }
ExprP row_plus_lane() {  // i * 64 + l
  return binary(BinOp::Add, binary(BinOp::Mul, idx("i"), index_imm(64)), idx("l"));
}
ExprP f32_load(const std::string& buffer, ExprP index) { return load(buffer, ScalarType::F32, {std::move(index)}); }

StmtP lanes(StmtP body, int64_t width = 16) {
  return make_for("l", index_imm(0), index_imm(width), std::move(body), ForKind::Vectorized);
}

std::string refusal(const StmtP& loop) {
  std::string why;
  EXPECT_FALSE(simd_loop(*loop, &why));
  return why;
}

TEST(SimdLoop, ConsecutiveAccessesAndUniformValuesQualify) {
  // y[i*64 + l] = -(2 * x[i*64 + l]) + z[i], with a lane-dependent let in between.
  ExprP scaled = binary(BinOp::Mul, float_imm(ScalarType::F32, 2), f32_load("x", row_plus_lane()));
  StmtP body = make_let("t", scaled,
                        make_store("y", {row_plus_lane()},
                                   binary(BinOp::Add, unary(UnOp::Neg, var("t", ScalarType::F32)), f32_load("z", {idx("i")}))));
  auto l = simd_loop(*lanes(body));
  ASSERT_TRUE(l);
  EXPECT_EQ(l->width, 16);
  EXPECT_EQ(l->element, ScalarType::F32);
  EXPECT_TRUE(l->varying_lets.count("t"));
  EXPECT_FALSE(l->varies(*f32_load("z", {idx("i")})));
}

TEST(SimdLoop, GathersCallsLaneConditionsAndSharedStoresKeepTheLoop) {
  ExprP gather = f32_load("x", {binary(BinOp::Mul, idx("l"), index_imm(2))});
  EXPECT_NE(refusal(lanes(make_store("y", {row_plus_lane()}, gather))).find("gather"), std::string::npos);
  // exp has a vector form 16 floats wide (libmvec's AVX-512 one); at 8 lanes clang's own mapping
  // is the better path, and log has none.
  ExprP e = call(Intrinsic::Exp, ScalarType::F32, {f32_load("x", row_plus_lane())});
  EXPECT_NE(refusal(lanes(make_store("y", {row_plus_lane()}, e), 8)).find("call"), std::string::npos);
  ExprP lg = call(Intrinsic::Log, ScalarType::F32, {f32_load("x", row_plus_lane())});
  EXPECT_NE(refusal(lanes(make_store("y", {row_plus_lane()}, lg))).find("call"), std::string::npos);
  // A condition on the lanes other than a masked tail's `start + lane < end` (lane stride 2 here).
  StmtP guarded = make_if(binary(BinOp::Lt, binary(BinOp::Mul, idx("l"), index_imm(2)), index_imm(3)),
                          make_store("y", {row_plus_lane()}, f32_load("x", row_plus_lane())));
  EXPECT_NE(refusal(lanes(guarded)).find("condition differs between lanes"), std::string::npos);
  // A masked tail's guard qualifies: the first 3 lanes run.
  StmtP masked = make_if(binary(BinOp::Lt, idx("l"), index_imm(3)), make_store("y", {row_plus_lane()}, f32_load("x", row_plus_lane())));
  auto tail = simd_loop(*lanes(masked));
  ASSERT_TRUE(tail);
  EXPECT_TRUE(tail->lane_limit(*binary(BinOp::Lt, idx("l"), index_imm(3))));
  // Every lane storing to s[i]: a reduction the pragma loop (or rfactor) must handle.
  EXPECT_NE(refusal(lanes(make_store("s", {idx("i")}, f32_load("x", row_plus_lane())))).find("consecutive"),
            std::string::npos);
  // 16 doubles are 128 bytes: wider than a vector register.
  ExprP d = load("xd", ScalarType::F64, {row_plus_lane()});
  EXPECT_NE(refusal(lanes(make_store("yd", {row_plus_lane()}, d))).find("64 bytes"), std::string::npos);
}

TEST(SimdLoop, EmittedAsVectorLoadsStoresAndBroadcasts) {
  Func f;
  f.name = "k";
  f.buffers = {{"x", ScalarType::F32, {128}, BufferRole::Input}, {"z", ScalarType::F32, {2}, BufferRole::Input},
               {"y", ScalarType::F32, {128}, BufferRole::Output}};
  ExprP value = binary(BinOp::Add, binary(BinOp::Mul, float_imm(ScalarType::F32, 2), f32_load("x", row_plus_lane())),
                       f32_load("z", {idx("i")}));
  f.body = make_for("i", index_imm(0), index_imm(2), lanes(make_store("y", {row_plus_lane()}, value)));
  std::string c = emit_c_source(f);
  EXPECT_NE(c.find("typedef float ekb_f32x16 __attribute__((vector_size(64)));"), std::string::npos) << c;
  EXPECT_NE(c.find("ekb_store_f32x16(&y["), std::string::npos) << c;
  EXPECT_NE(c.find("(ekb_splat_f32x16(2"), std::string::npos) << c;
  EXPECT_NE(c.find("* ekb_load_f32x16(&x["), std::string::npos) << c;
  EXPECT_NE(c.find("+ ekb_splat_f32x16(z[i])"), std::string::npos) << c;
  EXPECT_EQ(c.find("for (int64_t l"), std::string::npos) << c;
}

TEST(SimdLoop, SixteenLaneExpCallsTheVectorMathLibrary) {
  Func f;
  f.name = "k";
  f.buffers = {{"x", ScalarType::F32, {32}, BufferRole::Input}, {"y", ScalarType::F32, {32}, BufferRole::Output}};
  ExprP value = call(Intrinsic::Exp, ScalarType::F32, {f32_load("x", row_plus_lane())});
  f.body = make_for("i", index_imm(0), index_imm(2), lanes(make_store("y", {row_plus_lane()}, value)));
  ASSERT_TRUE(simd_loop(*f.body->body));
  std::string c = emit_c_source(f);
  EXPECT_NE(c.find("ekb_exp_f32x16(ekb_load_f32x16(&x["), std::string::npos) << c;
  // glibc's AVX-512 variant where the target has AVX-512, the scalar expf per lane elsewhere.
  EXPECT_NE(c.find("#if defined(__AVX512F__)\nekb_f32x16 _ZGVeN16v_expf(ekb_f32x16);"), std::string::npos) << c;
  EXPECT_NE(c.find("r[i] = expf(x[i]);"), std::string::npos) << c;
  EXPECT_EQ(c.find("for (int64_t l"), std::string::npos) << c;
}

// A stencil's taps inside the lanes: an inner loop with the same bounds in every lane and an
// accumulator of the body's own are one vector and a loop over vector values; an inner loop whose
// bounds depend on the lane, or an assignment to a variable from outside (a reduction over the
// lanes), keeps the pragma loop.
TEST(SimdLoop, InnerLoopsAndTheBodysAccumulatorsAreVectorCode) {
  Func f;
  f.name = "k";
  f.buffers = {{"x", ScalarType::F32, {80}, BufferRole::Input}, {"y", ScalarType::F32, {64}, BufferRole::Output}};
  // y[i * 16 + l] = sum over t in [0, 3) of (t + 1) * x[i * 16 + l + t]
  auto at = [](ExprP t) {
    return binary(BinOp::Add, binary(BinOp::Add, binary(BinOp::Mul, idx("i"), index_imm(16)), idx("l")), std::move(t));
  };
  ExprP tap = binary(BinOp::Mul, cast(ScalarType::F32, binary(BinOp::Add, idx("t"), index_imm(1))), f32_load("x", at(idx("t"))));
  StmtP taps = make_for("t", index_imm(0), index_imm(3),
                        make_assign("acc", binary(BinOp::Add, var("acc", ScalarType::F32), tap)), ForKind::Unrolled);
  StmtP lane_body = make_declare("acc", ScalarType::F32, float_imm(ScalarType::F32, 0),
                                 make_block({taps, make_store("y", {at(index_imm(0))}, var("acc", ScalarType::F32))}));
  f.body = make_for("i", index_imm(0), index_imm(4), lanes(lane_body));
  ASSERT_TRUE(simd_loop(*f.body->body));
  std::string c = emit_c_source(f);
  EXPECT_NE(c.find("ekb_f32x16 acc = ekb_splat_f32x16(0.0f);"), std::string::npos) << c;
  EXPECT_NE(c.find("for (int64_t t = 0; t < 3; ++t)"), std::string::npos) << c;
  EXPECT_EQ(c.find("for (int64_t l"), std::string::npos) << c;
  testing::NativeKernel kernel(c, "-O3 -march=native");
  auto entry = reinterpret_cast<void (*)(const float*, float*)>(kernel.symbol("ekb_main"));
  ASSERT_NE(entry, nullptr);
  alignas(64) float x[80], y[64];
  for (int i = 0; i < 80; ++i) x[i] = 0.25f * static_cast<float>(i % 13) - 1.0f;
  entry(x, y);
  for (int i = 0; i < 64; ++i) EXPECT_EQ(y[i], (0.0f + 1 * x[i]) + 2 * x[i + 1] + 3 * x[i + 2]) << i;

  StmtP store = make_store("y", {row_plus_lane()}, f32_load("x", row_plus_lane()));
  StmtP uneven = make_for("t", index_imm(0), idx("l"), make_assign("acc", var("acc", ScalarType::F32)));
  EXPECT_NE(refusal(lanes(make_declare("acc", ScalarType::F32, float_imm(ScalarType::F32, 0),
                                       make_block({uneven, store}))))
                .find("bounds differ between lanes"),
            std::string::npos);
  EXPECT_NE(refusal(lanes(make_block({make_assign("outer", f32_load("x", row_plus_lane())), store})))
                .find("declared outside it"),
            std::string::npos);
}

// min and max are lane-wise compares and blends with the scalar helpers' NaN propagation: a NaN
// in either operand is the result, as ekb_fmin_f32/ekb_fmax_f32 give it (relu6: min(max(x, 0), 6)).
TEST(SimdLoop, MinAndMaxKeepTheScalarNaNRule) {
  Func f;
  f.name = "k";
  f.buffers = {{"x", ScalarType::F32, {128}, BufferRole::Input}, {"y", ScalarType::F32, {128}, BufferRole::Output}};
  ExprP clamp = binary(BinOp::Min, binary(BinOp::Max, f32_load("x", row_plus_lane()), float_imm(ScalarType::F32, 0)),
                       float_imm(ScalarType::F32, 6));
  f.body = make_for("i", index_imm(0), index_imm(2), lanes(make_store("y", {row_plus_lane()}, clamp)));
  ASSERT_TRUE(simd_loop(*f.body->body));
  std::string c = emit_c_source(f);
  EXPECT_NE(c.find("ekb_fmin_f32x16(ekb_fmax_f32x16(ekb_load_f32x16(&x["), std::string::npos) << c;
  EXPECT_EQ(c.find("for (int64_t l"), std::string::npos) << c;

  testing::NativeKernel kernel(c, "-O3 -march=native");
  auto entry = reinterpret_cast<void (*)(const float*, float*)>(kernel.symbol("ekb_main"));
  ASSERT_NE(entry, nullptr);
  alignas(64) float x[128], y[128];
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (int i = 0; i < 128; ++i) x[i] = i % 5 == 0 ? nan : static_cast<float>(i % 11) - 3.0f;
  entry(x, y);
  for (int i : {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 64, 65, 66, 67, 68, 69, 70, 71, 72, 73, 74, 75, 76, 77,
                78, 79}) {  // rows of 16 lanes, 64 apart
    if (std::isnan(x[i])) {
      EXPECT_TRUE(std::isnan(y[i])) << i;
    } else {
      EXPECT_EQ(y[i], std::min(std::max(x[i], 0.0f), 6.0f)) << i;
    }
  }
}

}  // namespace
}  // namespace ekb::codegen
