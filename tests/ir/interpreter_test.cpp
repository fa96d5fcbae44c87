// The reference interpreter: hand-computed results for small programs, the exact integer and
// quantization semantics, boundary handling, updates, errors, and a throughput measurement.
#include "ir/interpreter.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>

#include "ir/inputs.h"
#include "ir_test_util.h"
#include "ir/parser.h"
#include "ir/quant.h"

namespace ekb::ir {
namespace {

using testing::load;
using testing::tensor_f;
using testing::tensor_i;

constexpr int32_t kMin32 = std::numeric_limits<int32_t>::min();
constexpr int32_t kMax32 = std::numeric_limits<int32_t>::max();

// "pattern NAME { level operator source "test" BODY } WORKLOADS"
std::string pat(const std::string& name, const std::string& body, const std::string& workloads) {
  return "pattern " + name + " {\n  level operator\n  source \"test\"\n" + body + "\n}\n" + workloads;
}

const std::string kMatmul = pat("linalg.mm", R"(
  types T
  params M, N, K
  input  a : T[M, K]
  input  b : T[K, N]
  output c : T[M, N]
  c[i, j] = sum(k in 0..K: a[i, k] * b[k, j])
)", "workload w { M = 2, N = 2, K = 3, T = f32 }\n"
    "workload big { M = 256, N = 256, K = 256, T = f32 }\n");

TEST(Interpreter, Matmul2x3x2) {
  auto l = load(kMatmul);
  ASSERT_TRUE(l.inst) << l.diags;
  auto out = run_reference(*l.inst, {tensor_f(ScalarType::F32, {2, 3}, {1, 2, 3, 4, 5, 6}),
                                     tensor_f(ScalarType::F32, {3, 2}, {7, 8, 9, 10, 11, 12})});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].type, ScalarType::F32);
  EXPECT_EQ(out[0].shape, (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(out[0].f, (std::vector<double>{58, 64, 139, 154}));
}

// The strided dot fast path and the generic reduction give bit-identical results (same order).
TEST(Interpreter, DotPathMatchesGenericPath) {
  std::string text = pat("linalg.mm2", R"(
  params M, N, K
  input  a : f32[M, K]
  input  b : f32[K, N]
  output c : f32[M, N]
  output d : f32[M, N]
  c[i, j] = sum(k in 0..K: a[i, k] * b[k, j])
  d[i, j] = sum(k in 0..K: select(k >= 0, a[i, k], 0.0) * b[k, j])
)", "workload w { M = 7, N = 5, K = 33 }\n");
  auto l = load(text);
  ASSERT_TRUE(l.inst) << l.diags;
  auto out = run_reference(*l.inst, generate_inputs(*l.inst, 3));
  EXPECT_EQ(out[0].f, out[1].f);
}

TEST(Interpreter, SoftmaxOfThree) {
  std::string text = pat("nn.softmax", R"(
  types T
  params R, C
  input  x : T[R, C]
  output y : T[R, C]
  temp   m : T[R]
  temp   s : T[R]
  m[r] = max(c in 0..C: x[r, c])
  s[r] = sum(c in 0..C: exp(x[r, c] - m[r]))
  y[r, c] = exp(x[r, c] - m[r]) / s[r]
)", "workload w { R = 1, C = 3, T = f32 }\n");
  auto l = load(text);
  ASSERT_TRUE(l.inst) << l.diags;
  auto out = run_reference(*l.inst, {tensor_f(ScalarType::F32, {1, 3}, {1, 2, 3})});
  ASSERT_EQ(out.size(), 1u);  // temps are not returned
  double s = std::exp(-2.0) + std::exp(-1.0) + 1.0;
  EXPECT_DOUBLE_EQ(out[0].f[0], std::exp(-2.0) / s);
  EXPECT_DOUBLE_EQ(out[0].f[1], std::exp(-1.0) / s);
  EXPECT_DOUBLE_EQ(out[0].f[2], 1.0 / s);
  auto all = run_reference_all(*l.inst, {tensor_f(ScalarType::F32, {1, 3}, {1, 2, 3})});
  ASSERT_EQ(all.size(), 4u);
  EXPECT_EQ(all[2].f[0], 3.0);  // m
}

TEST(Interpreter, BiquadImpulseResponse) {
  std::string text = pat("audio.biquad", R"(
  params N
  let b0 = 0.5
  let b1 = 0.25
  let b2 = 0.125
  let a1 = -0.5
  let a2 = 0.25
  input  x : f32[N]
  output y : f32[N]
  y[n] = b0 * x[n]
  for n in 0..N: y[n] = y[n] + b1 * pad(x, 0.0)[n - 1] + b2 * pad(x, 0.0)[n - 2]
                       - a1 * pad(y, 0.0)[n - 1] - a2 * pad(y, 0.0)[n - 2]
)", "workload w { N = 5 }\n");
  auto l = load(text);
  ASSERT_TRUE(l.inst) << l.diags;
  auto out = run_reference(*l.inst, {tensor_f(ScalarType::F32, {5}, {1, 0, 0, 0, 0})});
  EXPECT_EQ(out[0].f, (std::vector<double>{0.5, 0.5, 0.25, 0.0, -0.0625}));
}

TEST(Quant, KnownTfliteValues) {
  EXPECT_EQ(quant::rdmulh(kMin32, kMin32), kMax32);
  EXPECT_EQ(quant::rdmulh(kMin32, kMax32), -kMax32);
  EXPECT_EQ(quant::rdmulh(1 << 30, 1 << 30), 1 << 29);
  EXPECT_EQ(quant::rdmulh(100, 1 << 30), 50);
  EXPECT_EQ(quant::rdmulh(3, 1 << 30), 2);    // 1.5: gemmlowp's nudge rounds ties up,
  EXPECT_EQ(quant::rdmulh(-3, 1 << 30), -1);  // -1.5 too (like ARM SQRDMULH)
  EXPECT_EQ(quant::rdmulh(-5, 1 << 30), -2);  // -2.5 -> -2
  EXPECT_EQ(quant::rdmulh(-7, 1 << 30), -3);  // -3.5 -> -3
  EXPECT_EQ(quant::rshift(5, 1), 3);
  EXPECT_EQ(quant::rshift(-5, 1), -3);
  EXPECT_EQ(quant::rshift(-4, 1), -2);
  EXPECT_EQ(quant::rshift(7, 2), 2);
  EXPECT_EQ(quant::rshift(6, 2), 2);
  EXPECT_EQ(quant::rshift(-6, 2), -2);
  EXPECT_EQ(quant::rshift(-7, 2), -2);
  EXPECT_EQ(quant::rshift(123, 0), 123);
  EXPECT_EQ(quant::requant(100, 1073741824, 0), 50);
  EXPECT_EQ(quant::requant(3, 1073741824, 2), 6);    // left shift first
  EXPECT_EQ(quant::requant(6, 1073741824, -1), 2);   // 1.5 -> 2
  EXPECT_EQ(quant::requant(-6, 1073741824, -1), -2); // -1.5 -> -2
  EXPECT_EQ(quant::requant(1000, 1395864371, -5), 20);  // 1000 * 0.65 / 32 = 20.3
  EXPECT_EQ(quant::requant(-1000, 1395864371, -5), -20);
}

TEST(Interpreter, QuantizedRequantPipeline) {
  std::string text = pat("qnn.rq", R"(
  params N
  input  acc  : i32[N]
  input  mult : i32[N]
  input  sh   : i32[N] in [-31, 31]
  input  a    : i32[N]
  output y    : i32[N]
  output z    : i32[N]
  output q    : i8[N]
  y[i] = requant(acc[i], mult[i], sh[i])
  z[i] = rdmulh(a[i], a[i])
  q[i] = sat(i8, requant(acc[i], mult[i], sh[i]) + 3)
)", "workload w { N = 4 }\n");
  auto l = load(text);
  ASSERT_TRUE(l.inst) << l.diags;
  auto out = run_reference(
      *l.inst, {tensor_i(ScalarType::I32, {4}, {100, 6, -6, 1000000}),
                tensor_i(ScalarType::I32, {4}, {1073741824, 1073741824, 1073741824, 1073741824}),
                tensor_i(ScalarType::I32, {4}, {0, -1, -1, 0}),
                tensor_i(ScalarType::I32, {4}, {kMin32, kMax32, -1, 1 << 30})});
  EXPECT_EQ(out[0].i, (std::vector<int64_t>{50, 2, -2, 500000}));
  EXPECT_EQ(out[1].i, (std::vector<int64_t>{kMax32, kMax32 - 1, 0, 1 << 29}));
  EXPECT_EQ(out[2].i, (std::vector<int64_t>{53, 5, 1, 127}));
}

TEST(Interpreter, FloorDivModOfNegativesAndWrapping) {
  std::string text = pat("linalg.intops", R"(
  params N
  input  a : i32[N]
  input  b : i32[N]
  input  c : i8[N]
  input  u : u8[N]
  output q : i32[N]
  output r : i32[N]
  output w : i8[N]
  output v : u8[N]
  output s : i32[N]
  q[i] = a[i] / b[i]
  r[i] = a[i] % b[i]
  w[i] = c[i] + c[i]
  v[i] = u[i] + 100
  s[i] = (a[i] << 4) + (a[i] >> 1)
)", "workload w { N = 4 }\n");
  auto l = load(text);
  ASSERT_TRUE(l.inst) << l.diags;
  auto out = run_reference(*l.inst, {tensor_i(ScalarType::I32, {4}, {-7, 7, -7, 7}),
                                     tensor_i(ScalarType::I32, {4}, {2, -2, -2, 2}),
                                     tensor_i(ScalarType::I8, {4}, {100, -100, 64, 1}),
                                     tensor_i(ScalarType::U8, {4}, {200, 155, 156, 0})});
  EXPECT_EQ(out[0].i, (std::vector<int64_t>{-4, -4, 3, 3}));
  EXPECT_EQ(out[1].i, (std::vector<int64_t>{1, -1, -1, 1}));
  EXPECT_EQ(out[2].i, (std::vector<int64_t>{-56, 56, -128, 2}));
  EXPECT_EQ(out[3].i, (std::vector<int64_t>{44, 255, 0, 100}));
  EXPECT_EQ(out[4].i, (std::vector<int64_t>{-7 * 16 - 4, 7 * 16 + 3, -7 * 16 - 4, 7 * 16 + 3}));
}

TEST(Interpreter, DivisionByZeroNamesPatternAndLocation) {
  std::string text = pat("linalg.div", R"(
  params N
  input  a : i32[N]
  input  b : i32[N]
  output q : i32[N]
  q[i] = a[i] / b[i]
)", "workload w { N = 2 }\n");
  auto l = load(text);
  ASSERT_TRUE(l.inst) << l.diags;
  try {
    run_reference(*l.inst, {tensor_i(ScalarType::I32, {2}, {1, 2}),
                            tensor_i(ScalarType::I32, {2}, {1, 0})});
    FAIL() << "expected an error";
  } catch (const std::runtime_error& e) {
    std::string m = e.what();
    EXPECT_NE(m.find("linalg.div/w"), std::string::npos) << m;
    EXPECT_NE(m.find("division by zero"), std::string::npos) << m;
    EXPECT_NE(m.find(":9:15:"), std::string::npos) << m;  // the '/' on line 9
  }
}

TEST(Interpreter, InputMismatchIsAnError) {
  auto l = load(kMatmul);
  ASSERT_TRUE(l.inst) << l.diags;
  EXPECT_THROW(run_reference(*l.inst, {tensor_f(ScalarType::F32, {2, 3}, {1, 2, 3, 4, 5, 6})}),
               std::runtime_error);
  EXPECT_THROW(run_reference(*l.inst, {tensor_f(ScalarType::F32, {3, 2}, {1, 2, 3, 4, 5, 6}),
                                       tensor_f(ScalarType::F32, {3, 2}, {1, 2, 3, 4, 5, 6})}),
               std::runtime_error);
}

TEST(Interpreter, PadEdgeMirror) {
  std::string text = pat("img.border", R"(
  params N
  input  x : f32[N]
  output p : f32[N + 4]
  output e : f32[N + 4]
  output m : f32[N + 4]
  p[i] = pad(x, -1.0)[i - 2]
  e[i] = edge(x)[i - 2]
  m[i] = mirror(x)[i - 2]
)", "workload w { N = 4 }\n");
  auto l = load(text);
  ASSERT_TRUE(l.inst) << l.diags;
  auto out = run_reference(*l.inst, {tensor_f(ScalarType::F32, {4}, {10, 20, 30, 40})});
  EXPECT_EQ(out[0].f, (std::vector<double>{-1, -1, 10, 20, 30, 40, -1, -1}));
  EXPECT_EQ(out[1].f, (std::vector<double>{10, 10, 10, 20, 30, 40, 40, 40}));
  EXPECT_EQ(out[2].f, (std::vector<double>{30, 20, 10, 20, 30, 40, 30, 20}));
}

TEST(Interpreter, PaddedConvolutionFastPathMatchesGeneric) {
  // The conv uses the padded dot path; the second output forces the generic reduction.
  std::string text = pat("nn.conv", R"(
  params H, W, C, K
  input  x : f32[H, W, C]
  input  w : f32[K, 3, 3, C]
  output y : f32[H, W, K]
  output z : f32[H, W, K]
  y[h, v, k] = sum(kh in 0..3, kw in 0..3, c in 0..C: pad(x, 0.0)[h + kh - 1, v + kw - 1, c] * w[k, kh, kw, c])
  z[h, v, k] = sum(kh in 0..3, kw in 0..3, c in 0..C: pad(x, 0.0)[h + kh - 1, v + kw - 1, c] * w[k, kh, kw, c] + 0.0)
)", "workload w { H = 5, W = 4, C = 3, K = 2 }\n");
  auto l = load(text);
  ASSERT_TRUE(l.inst) << l.diags;
  auto in = generate_inputs(*l.inst, 11);
  auto out = run_reference(*l.inst, in);
  EXPECT_EQ(out[0].f, out[1].f);
  // One element by hand: the corner (0, 0) sees only kh, kw in 1..3.
  double s = 0;
  for (int kh = 1; kh < 3; ++kh)
    for (int kw = 1; kw < 3; ++kw)
      for (int c = 0; c < 3; ++c) s += in[0].f[((kh - 1) * 4 + (kw - 1)) * 3 + c] * in[1].f[(kh * 3 + kw) * 3 + c];
  EXPECT_EQ(out[0].f[0], s);
}

TEST(Interpreter, HistogramUpdates) {
  std::string text = pat("graph.hist", R"(
  params N, B
  input  x : i32[N] in [0, 3]
  output h : i32[B]
  h[b] = 0
  for i in 0..N: h[x[i]] = h[x[i]] + 1
)", "workload w { N = 7, B = 4 }\n");
  auto l = load(text);
  ASSERT_TRUE(l.inst) << l.diags;
  auto out = run_reference(*l.inst, {tensor_i(ScalarType::I32, {7}, {0, 3, 3, 1, 3, 0, 3})});
  EXPECT_EQ(out[0].i, (std::vector<int64_t>{2, 1, 0, 4}));
}

// Inputs outside their declared domain can make a verified gather go out of bounds: an error.
TEST(Interpreter, OutOfBoundsAccessIsAnError) {
  std::string text = pat("graph.gather", R"(
  params N, B
  input  x : i32[N] in [0, 3]
  input  t : f32[B]
  output h : i32[B]
  output g : f32[N]
  h[b] = 0
  for i in 0..N: h[x[i]] = h[x[i]] + 1
  g[i] = t[x[i]]
)", "workload w { N = 3, B = 4 }\n");
  auto l = load(text);
  ASSERT_TRUE(l.inst) << l.diags;
  try {
    run_reference(*l.inst, {tensor_i(ScalarType::I32, {3}, {0, 4, 1}), TensorData(ScalarType::F32, {4})});
    FAIL() << "expected an error";
  } catch (const std::runtime_error& e) {
    std::string m = e.what();
    EXPECT_NE(m.find("out of bounds"), std::string::npos) << m;
    EXPECT_NE(m.find("h[4]"), std::string::npos) << m;
  }
}

TEST(Interpreter, ConstantsAndScalarEvaluator) {
  auto l = load(kMatmul);
  ASSERT_TRUE(l.inst) << l.diags;
  Module m = parse_module(pat("linalg.k", R"(
  params N
  let H = N / 2 - 7
  let s = 0.5 * 3.0
  input  x : f32[N]
  output y : f32[N]
  y[i] = x[i] * s + cast(f32, H)
)", "workload w { N = 10 }\n"));
  Diagnostics d;
  auto inst = instantiate(m, m.workloads[0], d);
  ASSERT_TRUE(inst) << d.format();
  EXPECT_EQ(eval_constant(*inst, *m.pattern.lets[0].value).int_value, -2);
  LetValue s = eval_constant(*inst, *m.pattern.lets[1].value);
  EXPECT_TRUE(s.is_float);
  EXPECT_EQ(s.float_value, 1.5);
  ScalarEvaluator ev(*inst);
  // The shape expression N, evaluated with no variables.
  int h = ev.compile(*m.pattern.tensors[0].shape[0], {});
  EXPECT_EQ(ev.eval_int(h, nullptr), 10);
}

TEST(Interpreter, FreeVariablesInUpdatesScanRows) {
  std::string text = pat("linalg.cumsum", R"(
  params R, C
  input  x : f32[R, C]
  output y : f32[R, C]
  y[r, c] = x[r, c]
  for c in 1..C: y[r, c] = y[r, c - 1] + y[r, c]
)", "workload w { R = 2, C = 4 }\n");
  auto l = load(text);
  ASSERT_TRUE(l.inst) << l.diags;
  auto out = run_reference(*l.inst, {tensor_f(ScalarType::F32, {2, 4}, {1, 2, 3, 4, 10, 20, 30, 40})});
  EXPECT_EQ(out[0].f, (std::vector<double>{1, 3, 6, 10, 10, 30, 60, 100}));
}

const std::string kCholesky = pat("linalg.cholesky", R"(
  params N
  input  a : f64[N, N] spd
  output l : f64[N, N]
  l[i, j] = 0.0
  for j in 0..N {
    l[j, j] = sqrt(a[j, j] - sum(k in 0..j: l[j, k] * l[j, k]))
    for i in j + 1..N: l[i, j] = (a[i, j] - sum(k in 0..j: l[i, k] * l[j, k])) / l[j, j]
  }
)", "workload w { N = 3 }\n");

TEST(Interpreter, Cholesky3x3) {
  auto l = load(kCholesky);
  ASSERT_TRUE(l.inst) << l.diags;
  auto out = run_reference(
      *l.inst, {tensor_f(ScalarType::F64, {3, 3}, {4, 12, -16, 12, 37, -43, -16, -43, 98})});
  EXPECT_EQ(out[0].f, (std::vector<double>{2, 0, 0, 6, 1, 0, -8, 5, 3}));
}

TEST(Interpreter, ArgmaxArgminFirstIndexOnTies) {
  std::string text = pat("nn.argmax", R"(
  params R, C
  input  x  : f32[R, C]
  output mx : i64[R]
  output mn : i32[R]
  mx[r] = argmax(c in 0..C: x[r, c])
  mn[r] = cast(i32, argmin(c in 0..C: x[r, c]))
)", "workload w { R = 2, C = 4 }\n");
  auto l = load(text);
  ASSERT_TRUE(l.inst) << l.diags;
  auto out = run_reference(*l.inst, {tensor_f(ScalarType::F32, {2, 4}, {1, 3, 2, 3, 5, -1, 5, -1})});
  EXPECT_EQ(out[0].i, (std::vector<int64_t>{1, 0}));
  EXPECT_EQ(out[1].i, (std::vector<int64_t>{0, 1}));
}

TEST(Interpreter, CastsSaturateAndRound) {
  std::string text = pat("nn.casts", R"(
  params N
  input  x  : f32[N]
  input  z  : i32[N]
  output c  : i8[N]
  output s  : i8[N]
  output w  : i8[N]
  output r  : f32[N]
  output re : f32[N]
  output rl : f32[N]
  c[i]  = cast(i8, x[i])
  s[i]  = sat(i8, z[i])
  w[i]  = cast(i8, z[i])
  r[i]  = round(x[i])
  re[i] = round_even(x[i])
  rl[i] = max(x[i], 0.0)
)", "workload w { N = 6 }\n");
  auto l = load(text);
  ASSERT_TRUE(l.inst) << l.diags;
  double nan = std::numeric_limits<double>::quiet_NaN();
  auto out = run_reference(*l.inst, {tensor_f(ScalarType::F32, {6}, {300.7, -300.2, nan, 2.5, -2.5, -2.9}),
                                     tensor_i(ScalarType::I32, {6}, {200, -200, 5, 128, -129, 127})});
  EXPECT_EQ(out[0].i, (std::vector<int64_t>{127, -128, 0, 2, -2, -2}));
  EXPECT_EQ(out[1].i, (std::vector<int64_t>{127, -128, 5, 127, -128, 127}));
  EXPECT_EQ(out[2].i, (std::vector<int64_t>{-56, 56, 5, -128, 127, 127}));
  EXPECT_EQ(out[3].f[3], 3.0);
  EXPECT_EQ(out[3].f[4], -3.0);
  EXPECT_EQ(out[4].f[3], 2.0);
  EXPECT_EQ(out[4].f[4], -2.0);
  EXPECT_EQ(out[4].f[5], -3.0);
  EXPECT_TRUE(std::isnan(out[5].f[2]));  // max propagates NaN
  EXPECT_EQ(out[5].f[4], 0.0);
}

TEST(Interpreter, TriangularReductionAndSelect) {
  std::string text = pat("linalg.tri", R"(
  params N
  input  x : f32[N]
  output p : f32[N]
  output q : f32[N]
  p[i] = sum(k in 0..i + 1: x[k])
  q[i] = select(x[i] > 2.0 && i != 0, x[i] * 10.0, -x[i])
)", "workload w { N = 4 }\n");
  auto l = load(text);
  ASSERT_TRUE(l.inst) << l.diags;
  auto out = run_reference(*l.inst, {tensor_f(ScalarType::F32, {4}, {3, 1, 4, 2})});
  EXPECT_EQ(out[0].f, (std::vector<double>{3, 4, 8, 10}));
  EXPECT_EQ(out[1].f, (std::vector<double>{-3, -1, 40, -2}));
}

// Float values are f64 in the reference: an f32 tensor does not round what is stored into it.
TEST(Interpreter, FloatsAreComputedInF64) {
  std::string text = pat("nn.prec", R"(
  params N
  input  x : f32[N]
  output y : f32[N]
  temp   t : f32[N]
  t[i] = x[i] / 3.0
  y[i] = cast(f32, cast(f16, t[i]) * 3.0) - x[i]
)", "workload w { N = 1 }\n");
  auto l = load(text);
  ASSERT_TRUE(l.inst) << l.diags;
  auto out = run_reference(*l.inst, {tensor_f(ScalarType::F32, {1}, {1.0})});
  EXPECT_EQ(out[0].f[0], 0.0);  // (1/3 in f64) * 3 == 1; f32 or f16 rounding would not give 0
}

// Throughput: GEMM 256^3 (dot path), MobileNet pointwise conv 56x56x128 -> 128 (dot path), and
// a generic-path reduction whose body is not a plain product.
TEST(InterpreterPerf, Throughput) {
  auto time_it = [](const Instance& inst, const std::vector<TensorData>& in) {
    auto t0 = std::chrono::steady_clock::now();
    auto out = run_reference(inst, in);
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  };
  auto l = load(kMatmul, "big");
  ASSERT_TRUE(l.inst) << l.diags;
  double t_gemm = time_it(*l.inst, generate_inputs(*l.inst, 1));

  auto pw = load(pat("nn.pwconv", R"(
  params H, W, C, K
  input  x : f32[H, W, C]
  input  w : f32[K, C]
  input  b : f32[K]
  output y : f32[H, W, K]
  output z : f32[H, W, K]
  y[h, v, k] = b[k] + sum(c in 0..C: x[h, v, c] * w[k, c])
  z[h, v, k] = b[k] + sum(c in 0..C: x[h, v, c] * w[k, c] + 1.0)
)", "workload w { H = 56, W = 56, C = 128, K = 128 }\n"));
  ASSERT_TRUE(pw.inst) << pw.diags;
  auto t0 = std::chrono::steady_clock::now();
  auto in = generate_inputs(*pw.inst, 1);
  double t_gen = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  double t_both = time_it(*pw.inst, in);
  double macs = 56.0 * 56 * 128 * 128;
  std::printf("[ perf     ] GEMM 256^3: %.3f s (%.0f M MAC/s)\n", t_gemm, 256.0 * 256 * 256 / t_gemm / 1e6);
  std::printf("[ perf     ] pwconv 56x56x128->128, dot path + generic path: %.3f s total; "
              "inputs %.3f s\n", t_both, t_gen);
  // Generic path alone: body a*b + 1.0 is 5 nodes (2 loads, mul, add, const) + the sum's combine.
  auto gen = load(pat("nn.generic", R"(
  params H, W, C, K
  input  x : f32[H, W, C]
  input  w : f32[K, C]
  output z : f32[H, W, K]
  z[h, v, k] = sum(c in 0..C: x[h, v, c] * w[k, c] + 1.0)
)", "workload w { H = 56, W = 56, C = 128, K = 128 }\n"));
  ASSERT_TRUE(gen.inst) << gen.diags;
  double t_generic = time_it(*gen.inst, generate_inputs(*gen.inst, 1));
  std::printf("[ perf     ] generic reduction 56x56x128x128: %.3f s (%.0f M iterations/s, "
              "%.0f M nodes/s at 5 nodes per iteration: add, mul, 2 loads, const)\n",
              t_generic, macs / t_generic / 1e6, 5 * macs / t_generic / 1e6);
  EXPECT_LT(t_gemm, 10.0);
  EXPECT_LT(t_generic, 30.0);
}

}  // namespace
}  // namespace ekb::ir
