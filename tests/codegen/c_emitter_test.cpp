// The C emitter: exact IR semantics on the inputs random data rarely hits (wrapping, floor
// division, saturation, NaN, ties, quantization edge cases), each program compiled by clang and
// run against the reference interpreter; and the shape of the emitted file (ABI signature,
// helpers only when used, scratch declaration).
#include "codegen/c_emitter.h"
#include "lower/lower.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "../ir/ir_test_util.h"
#include "codegen/signature.h"
#include "ir/inputs.h"
#include "ir/interpreter.h"
#include "native_test_util.h"

namespace ekb::codegen {
namespace {

using ir::ScalarType;
using ir::testing::load;
using ir::testing::tensor_f;
using ir::testing::tensor_i;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

std::string pat(const std::string& body, const std::string& workload) {
  return "pattern nn.t {\n  level operator\n  source \"test\"\n" + body + "\n}\nworkload w { " + workload +
         " }\n";
}

// Compiles the default lowering of the first workload and runs it on `inputs`; its outputs must
// equal the reference's exactly (rounded to the output type; NaN for NaN).
void expect_exact(const std::string& text, const std::vector<ir::TensorData>& inputs) {
  auto l = load(text);
  ASSERT_TRUE(l.inst) << l.diags;
  std::string src = emit_c_source(lower::lower(*l.inst));
  testing::NativeKernel k(src);
  auto got = testing::run_native(k, *l.inst, inputs);
  auto want = ir::run_reference(*l.inst, inputs);
  ASSERT_EQ(got.size(), want.size());
  for (size_t o = 0; o < want.size(); ++o) {
    ASSERT_EQ(got[o].num_elements(), want[o].num_elements());
    for (int64_t e = 0; e < want[o].num_elements(); ++e) {
      // The reference does not round its outputs to their type; a kernel's buffer does.
      double g = got[o].as_double(e), w = ir::round_to_type(want[o].type, want[o].as_double(e));
      if (std::isnan(w))
        EXPECT_TRUE(std::isnan(g)) << "output " << o << " element " << e << "\n" << src;
      else
        EXPECT_EQ(g, w) << "output " << o << " element " << e << "\n" << src;
    }
  }
}

TEST(CEmitter, IntegerArithmeticWrapsAtEveryWidth) {
  expect_exact(
      pat(R"(
  params N
  input  a : i32[N]
  input  b : i32[N]
  input  c : i8[N]
  input  d : i64[N]
  output s : i32[N]
  output p : i32[N]
  output n : i32[N]
  output t : i8[N]
  output u : i64[N]
  s[i] = a[i] + b[i]
  p[i] = a[i] * b[i]
  n[i] = -a[i]
  t[i] = c[i] * c[i] + c[i]
  u[i] = d[i] * d[i] - d[i]
)",
          "N = 4"),
      {tensor_i(ScalarType::I32, {4}, {2147483647, -2147483648LL, 65536, -7}),
       tensor_i(ScalarType::I32, {4}, {1, -1, 65536, 3}), tensor_i(ScalarType::I8, {4}, {127, -128, 16, -3}),
       tensor_i(ScalarType::I64, {4}, {INT64_MAX, INT64_MIN, 4294967296LL, -3})});
}

TEST(CEmitter, FloorDivisionAndModulo) {
  expect_exact(pat(R"(
  params N
  input  a : i32[N]
  input  b : i32[N]
  output q : i32[N]
  output r : i32[N]
  output q4 : i32[N]
  output r4 : i32[N]
  output q3 : i64[N]
  q[i] = a[i] / b[i]
  r[i] = a[i] % b[i]
  q4[i] = a[i] / 4
  r4[i] = a[i] % 4
  q3[i] = (i - 2) / 3 + (i - 2) % 3
)",
                   "N = 6"),
               {tensor_i(ScalarType::I32, {6}, {7, -7, 7, -7, -2147483648LL, 0}),
                tensor_i(ScalarType::I32, {6}, {2, 2, -2, -2, -1, 5})});
}

TEST(CEmitter, ShiftsOfTheExactValue) {
  expect_exact(pat(R"(
  params N
  input  a : i32[N]
  input  k : i32[N] in [0, 63]
  output l : i32[N]
  output r : i32[N]
  output r3 : i32[N]
  l[i] = a[i] << k[i]
  r[i] = a[i] >> k[i]
  r3[i] = a[i] >> 3
)",
                   "N = 4"),
               {tensor_i(ScalarType::I32, {4}, {1, -5, 123456789, -1}),
                tensor_i(ScalarType::I32, {4}, {31, 1, 40, 63})});
}

TEST(CEmitter, CastsTruncateSaturateAndMapNaNToZero) {
  expect_exact(pat(R"(
  params N
  input  x : f32[N]
  input  w : i32[N]
  output c8 : i8[N]
  output c32 : i32[N]
  output u : u8[N]
  output s8 : i8[N]
  output wr : i8[N]
  output b : bool[N]
  c8[i] = cast(i8, x[i])
  c32[i] = cast(i32, x[i])
  u[i] = sat(u8, x[i])
  s8[i] = sat(i8, w[i])
  wr[i] = cast(i8, w[i])
  b[i] = cast(bool, x[i])
)",
                   "N = 8"),
               {tensor_f(ScalarType::F32, {8}, {1.9, -1.9, 300, -300, kNaN, kInf, -kInf, 3e9}),
                tensor_i(ScalarType::I32, {8}, {127, 128, -129, 255, 256, -1, 1000, -1000})});
}

TEST(CEmitter, RoundingFunctions) {
  expect_exact(pat(R"(
  params N
  input  x : f32[N]
  output r : f32[N]
  output e : f32[N]
  output t : f32[N]
  output f : f32[N]
  r[i] = round(x[i])
  e[i] = round_even(x[i])
  t[i] = trunc(x[i])
  f[i] = floor(x[i])
)",
                   "N = 6"),
               {tensor_f(ScalarType::F32, {6}, {0.5, 1.5, 2.5, -0.5, -2.5, -1.25})});
}

TEST(CEmitter, MinMaxAndClampPropagateNaN) {
  expect_exact(
      pat(R"(
  params N
  input  x : f32[N]
  input  y : f32[N]
  output lo : f32[N]
  output hi : f32[N]
  output cl : f32[N]
  output m : f32[1]
  lo[i] = min(x[i], y[i])
  hi[i] = max(x[i], y[i])
  cl[i] = clamp(x[i], 0.0, 1.0)
  m[j] = max(i in 0..N: x[i])
)",
          "N = 4"),
      {tensor_f(ScalarType::F32, {4}, {1, kNaN, 3, -2}), tensor_f(ScalarType::F32, {4}, {kNaN, 2, 1, 5})});
}

TEST(CEmitter, ArgmaxTakesTheFirstExtremeAndNaNNeverWinsLater) {
  expect_exact(pat(R"(
  params N
  input  x : f32[3, N]
  output am : i64[3]
  output an : i64[3]
  am[r] = argmax(i in 0..N: x[r, i])
  an[r] = argmin(i in 0..N: x[r, i])
)",
                   "N = 4"),
               {tensor_f(ScalarType::F32, {3, 4}, {1, 3, 3, 2, kNaN, 5, 1, 5, 2, kNaN, 7, -1})});
}

TEST(CEmitter, QuantizationIntrinsicsAtTheirEdges) {
  expect_exact(pat(R"(
  params N
  input  a : i32[N]
  input  b : i32[N]
  input  s : i32[N]
  output d : i32[N]
  output r : i32[N]
  output q : i32[N]
  d[i] = rdmulh(a[i], b[i])
  r[i] = rshift(a[i], clamp(s[i], 0, 31))
  q[i] = requant(a[i], b[i], clamp(s[i], -31, 31))
)",
                   "N = 6"),
               {tensor_i(ScalarType::I32, {6}, {-2147483648LL, -2147483648LL, 2147483647, -7, 5, -5}),
                tensor_i(ScalarType::I32, {6},
                         {-2147483648LL, 2147483647, 1073741824, 2147483647, 1073741824, 1073741824}),
                tensor_i(ScalarType::I32, {6}, {0, 31, 1, 1, -1, -1})});
}

TEST(CEmitter, BoundariesPadEdgeMirror) {
  expect_exact(pat(R"(
  params N
  input  x : f32[N]
  output p : f32[N + 4]
  output e : f32[N + 4]
  output m : f32[N + 4]
  p[i] = pad(x, -1.0)[i - 2]
  e[i] = edge(x)[i - 2]
  m[i] = mirror(x)[i - 2]
)",
                   "N = 3"),
               {tensor_f(ScalarType::F32, {3}, {10, 20, 30})});
}

TEST(CEmitter, SelectAndLogicEvaluateOnlyWhatTheReferenceDoes) {
  // Where b is 0 the unselected operands divide by zero, which traps on x86: the generated code
  // must not evaluate them, reductions included.
  expect_exact(pat(R"(
  params N
  input  a : i32[N]
  input  b : i32[N]
  output y : i32[N]
  output z : i32[N]
  output w : bool[N]
  y[i] = select(b[i] != 0, a[i] / b[i], 0)
  z[i] = select(b[i] == 0, 0, sum(k in 0..3: a[i] % b[i]))
  w[i] = b[i] != 0 && a[i] / b[i] > 1
)",
                   "N = 4"),
               {tensor_i(ScalarType::I32, {4}, {7, 8, -9, 5}), tensor_i(ScalarType::I32, {4}, {2, 0, 4, 0})});
}

TEST(CEmitter, HalfPrecisionLoadsComputeInF32AndStoreRounded) {
  expect_exact(
      pat(R"(
  params N
  input  x : f16[N]
  input  y : bf16[N]
  output s : f16[N]
  output t : bf16[N]
  s[i] = x[i] * 3.0 + 1.0
  t[i] = cast(bf16, cast(f32, y[i]) * 0.5)
)",
          "N = 3"),
      {tensor_f(ScalarType::F16, {3}, {0.5, -2, 1000}), tensor_f(ScalarType::BF16, {3}, {1, -3, 256})});
}

TEST(CEmitter, UpdatesRecurrencesAndFreeVariables) {
  expect_exact(pat(R"(
  params N
  input  x : i32[N, 3]
  output c : i32[N, 3]
  c[i, j] = x[i, j]
  for i in 1..N: c[i, j] = c[i - 1, j] + c[i, j]
)",
                   "N = 4"),
               {tensor_i(ScalarType::I32, {4, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12})});
}

TEST(CEmitter, ScatterThroughDataDependentIndices) {
  expect_exact(pat(R"(
  params N
  input  v : u8[N] in [0, 3]
  output h : i32[4]
  h[b] = 0
  for i in 0..N: h[cast(i64, v[i])] = h[cast(i64, v[i])] + 1
)",
                   "N = 6"),
               {tensor_i(ScalarType::U8, {6}, {3, 0, 3, 1, 3, 0})});
}

TEST(CEmitter, EntryPointIsTheAbiSignature) {
  auto l = load(pat(R"(
  types T
  params M, K
  input  a : T[M, K]
  input  b : f16[K]
  output y : T[M]
  output n : bool[M]
  y[m] = sum(k in 0..K: a[m, k] * cast(T, b[k]))
  n[m] = y[m] > 0
)",
                    "M = 3, K = 5, T = f32"));
  ASSERT_TRUE(l.inst) << l.diags;
  std::string src = emit_c_source(lower::lower(*l.inst));
  std::string abi = kernel_signature(*l.inst, Target::Cpu);
  abi.pop_back();  // ';'
  EXPECT_NE(src.find(abi + " {"), std::string::npos) << src;
  EXPECT_EQ(src.find("ekb_scratch_bytes"), std::string::npos) << "small temps need no scratch";
  EXPECT_EQ(src.find("ekb_floordiv"), std::string::npos) << "helpers are emitted only when used";
}

TEST(CEmitter, LargeTempsLiveInTheDeclaredScratch) {
  auto l = load(pat(R"(
  params N
  input  x : f32[N]
  output y : f32[N]
  temp   t : f32[N]
  temp   u : i8[N]
  t[i] = x[i] * 2.0
  u[i] = cast(i8, i % 100)
  y[i] = t[N - 1 - i] + cast(f32, u[i])
)",
                    "N = 5000"));
  ASSERT_TRUE(l.inst) << l.diags;
  std::string src = emit_c_source(lower::lower(*l.inst));
  EXPECT_NE(src.find("int64_t ekb_scratch_bytes(int64_t N) {\n  return 25088;\n}"), std::string::npos) << src;
  EXPECT_NE(src.find("int64_t N,\n              void* scratch) {"), std::string::npos) << src;
  testing::NativeKernel k(src);
  auto in = ir::generate_inputs(*l.inst, 7);
  EXPECT_EQ(
      testing::compare_outputs(*l.inst, testing::run_native(k, *l.inst, in), ir::run_reference(*l.inst, in)),
      "");
}

TEST(CEmitter, RenamedEntryPoints) {
  auto l = load(pat(R"(
  params N
  input  x : f32[N]
  output y : f32[N]
  temp   t : f32[N]
  t[i] = x[i]
  y[i] = t[i]
)",
                    "N = 2000"));
  ASSERT_TRUE(l.inst) << l.diags;
  std::string src = emit_c_source(lower::lower(*l.inst), {"kernel_7", "kernel_7_scratch"});
  EXPECT_NE(src.find("void kernel_7(const float* x,"), std::string::npos) << src;
  EXPECT_NE(src.find("int64_t kernel_7_scratch(int64_t N)"), std::string::npos) << src;
}

}  // namespace
}  // namespace ekb::codegen
