// Cost facts: exact operation counts for dense, triangular, clipped and data-dependent domains,
// the float/int split, what is not counted, and min_bytes.
#include "ir/cost.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "ir_test_util.h"

namespace ekb::ir {
namespace {

using testing::load;
using testing::tensor_i;

std::string pat(const std::string& name, const std::string& body, const std::string& workloads) {
  return "pattern " + name + " {\n  level operator\n  source \"test\"\n" + body + "\n}\n" + workloads;
}

TEST(Cost, GemmIs2MNK) {
  std::string text = pat("linalg.gemm", R"(
  types T
  params M, N, K
  input  a : T[M, K]
  input  b : T[K, N]
  output c : T[M, N]
  c[i, j] = sum(k in 0..K: a[i, k] * b[k, j])
)", "workload w { M = 64, N = 48, K = 40, T = f32 }\nworkload h { M = 64, N = 48, K = 40, T = f16 }\n");
  auto l = load(text);
  ASSERT_TRUE(l.inst) << l.diags;
  CostFacts c = compute_cost(*l.inst);
  EXPECT_EQ(c.flops, 2.0 * 64 * 48 * 40);
  EXPECT_EQ(c.int_ops, 0);
  EXPECT_EQ(c.transcendentals, 0);
  EXPECT_EQ(c.min_bytes, 4.0 * (64 * 40 + 40 * 48 + 64 * 48));
  EXPECT_EQ(c.input_bytes, 4.0 * (64 * 40 + 40 * 48));
  EXPECT_FALSE(c.data_dependent);
  auto h = load(text, "h");
  ASSERT_TRUE(h.inst) << h.diags;
  EXPECT_EQ(compute_cost(*h.inst).min_bytes, 2.0 * (64 * 40 + 40 * 48 + 64 * 48));
}

// A factor that does not depend on a sum's variables and multiplies every term is counted once
// per evaluation of the sum (c * sum(k: x_k), algebraically), not once per term: PolyBench's GEMM
// (C = beta * C + sum(k: alpha * A * B)) is then 2MNK plus 3 per output, the textbook count.
TEST(Cost, ALoopInvariantFactorOfASumCountsOncePerOutput) {
  auto l = load(pat("linalg.gemm", R"(
  types T
  params M, N, K
  let alpha = 1.5
  let beta = 1.2
  input  a : T[M, K]
  input  b : T[K, N]
  input  c_in : T[M, N]
  output c : T[M, N]
  output s : T[M]
  c[i, j] = beta * c_in[i, j] + sum(k in 0..K: alpha * a[i, k] * b[k, j])
  s[i] = sum(k in 0..K: a[i, k] * alpha * b[k, 0] + b[k, 1] * alpha * a[i, k])
)", "workload w { M = 64, N = 48, K = 40, T = f32 }\n"));
  ASSERT_TRUE(l.inst) << l.diags;
  // c: 2 per point of k, then alpha, beta and + per output; s: two products, their sum and the
  // combine per point (alpha taken out of both terms), then alpha per output.
  EXPECT_EQ(compute_cost(*l.inst).flops, 2.0 * 64 * 48 * 40 + 3.0 * 64 * 48 + 4.0 * 64 * 40 + 1.0 * 64);
}

// The textbook counts of a convolution (2 per multiply-accumulate, plus the bias) and of attention
// (4 S L D for the two matrix products, plus the softmax's and the scale's per-element ops).
TEST(Cost, ConvolutionAndAttentionHaveTheirTextbookCounts) {
  auto conv = load(pat("nn.conv2d", R"(
  types T
  params H, W, C, K, KH, KW
  let OH = H - KH + 1
  let OW = W - KW + 1
  input  x : T[H, W, C]
  input  w : T[K, KH, KW, C]
  input  b : T[K]
  output y : T[OH, OW, K]
  y[oh, ow, k] = b[k] + sum(kh in 0..KH, kw in 0..KW, c in 0..C: x[oh + kh, ow + kw, c] * w[k, kh, kw, c])
)", "workload w { H = 12, W = 10, C = 8, K = 16, KH = 3, KW = 3, T = f32 }\n"));
  ASSERT_TRUE(conv.inst) << conv.diags;
  EXPECT_EQ(compute_cost(*conv.inst).flops, 2.0 * 10 * 8 * 16 * 3 * 3 * 8 + 10.0 * 8 * 16);
  auto sdpa = load(pat("transformer.sdpa", R"(
  types T
  params S, L, D
  input  q : T[S, D]
  input  k : T[L, D]
  input  v : T[L, D]
  output o : T[S, D]
  temp   s : T[S, L]
  temp   m : T[S]
  temp   p : T[S, L]
  temp   z : T[S]
  s[i, j] = sum(d in 0..D: q[i, d] * k[j, d]) * rsqrt(cast(T, D))
  m[i] = max(j in 0..L: s[i, j])
  p[i, j] = exp(s[i, j] - m[i])
  z[i] = sum(j in 0..L: p[i, j])
  o[i, d] = sum(j in 0..L: p[i, j] * v[j, d]) / z[i]
)", "workload w { S = 20, L = 24, D = 8, T = f32 }\n"));
  ASSERT_TRUE(sdpa.inst) << sdpa.diags;
  // 4SLD; the scale, max, subtract, exp and sum once per score (5SL); the division per output.
  EXPECT_EQ(compute_cost(*sdpa.inst).flops, 4.0 * 20 * 24 * 8 + 5.0 * 20 * 24 + 20.0 * 8);
}

TEST(Cost, TriangularReductions) {
  std::string text = pat("linalg.tri", R"(
  params M, N
  input  x : f32[N]
  input  a : f32[M, N]
  input  b : f32[N, N]
  output p : f32[N]
  output l : f32[M, N]
  p[i] = sum(k in 0..i + 1: x[k])
  l[i, j] = sum(k in 0..j: a[i, k] * b[k, j])
)", "workload w { M = 3, N = 10 }\n");
  auto l = load(text);
  ASSERT_TRUE(l.inst) << l.diags;
  CostFacts c = compute_cost(*l.inst);
  double expect = 0;
  for (int i = 0; i < 10; ++i) expect += i + 1;     // p: one add per point
  for (int j = 0; j < 10; ++j) expect += 3 * 2 * j;  // l: mul + add per point
  EXPECT_EQ(c.flops, expect);
}

TEST(Cost, CholeskyUpdatesWithDependentRanges) {
  std::string text = pat("linalg.cholesky", R"(
  params N
  input  a : f64[N, N] spd
  output l : f64[N, N]
  l[i, j] = 0.0
  for j in 0..N {
    l[j, j] = sqrt(a[j, j] - sum(k in 0..j: l[j, k] * l[j, k]))
    for i in j + 1..N: l[i, j] = (a[i, j] - sum(k in 0..j: l[i, k] * l[j, k])) / l[j, j]
  }
)", "workload w { N = 50 }\n");
  auto l = load(text);
  ASSERT_TRUE(l.inst) << l.diags;
  CostFacts c = compute_cost(*l.inst);
  double expect = 0;
  const int n = 50;
  for (int j = 0; j < n; ++j) expect += 2 + 2 * j + (n - 1 - j) * (2 + 2 * j);
  EXPECT_EQ(c.flops, expect);
  EXPECT_EQ(c.transcendentals, n);  // one sqrt per column
}

TEST(Cost, ClippedWindowCountsExactly) {
  // TFLite-style average pool: the window is clipped to the image.
  std::string text = pat("nn.avgpool", R"(
  params H, W, C, KH, KW, S, P
  let OH = (H + 2 * P - KH) / S + 1
  let OW = (W + 2 * P - KW) / S + 1
  input  x : f32[H, W, C]
  output y : f32[OH, OW, C]
  y[oh, ow, c] = sum(kh in max(0, P - oh * S)..min(KH, H + P - oh * S),
                     kw in max(0, P - ow * S)..min(KW, W + P - ow * S):
                     pad(x, 0.0)[oh * S + kh - P, ow * S + kw - P, c])
                 / cast(f32, (min(KH, H + P - oh * S) - max(0, P - oh * S))
                             * (min(KW, W + P - ow * S) - max(0, P - ow * S)))
)", "workload w { H = 9, W = 7, C = 5, KH = 3, KW = 3, S = 2, P = 1 }\n");
  auto l = load(text);
  ASSERT_TRUE(l.inst) << l.diags;
  CostFacts c = compute_cost(*l.inst);
  const int H = 9, W = 7, C = 5, K = 3, S = 2, P = 1;
  const int OH = (H + 2 * P - K) / S + 1, OW = (W + 2 * P - K) / S + 1;
  double expect = 0;
  for (int oh = 0; oh < OH; ++oh)
    for (int ow = 0; ow < OW; ++ow) {
      int rows = std::min(K, H + P - oh * S) - std::max(0, P - oh * S);
      int cols = std::min(K, W + P - ow * S) - std::max(0, P - ow * S);
      expect += C * (rows * cols + 1);  // adds, then one division
    }
  EXPECT_EQ(c.flops, expect);
}

TEST(Cost, IntegerOpsIndexArithmeticAndConstants) {
  std::string text = pat("qnn.requant", R"(
  params N
  let zp = 3
  input  acc : i32[N]
  input  x   : f32[2 * N]
  output q   : i8[N]
  output g   : f32[N]
  output r   : f32[N]
  q[i] = sat(i8, requant(acc[i], 1073741824, -1) + cast(i32, zp))
  g[i] = x[2 * i + 1] * (1.0 / 6.0)
  r[i] = select(x[i] > 0.0 && i >= 1, x[i], 0.0)
)", "workload w { N = 8 }\n");
  auto l = load(text);
  ASSERT_TRUE(l.inst) << l.diags;
  CostFacts c = compute_cost(*l.inst);
  // q: requant + add (cast and constants free); g: one mul (index math and 1/6 free);
  // r: comparison + && (one operand is data) + select.
  EXPECT_EQ(c.int_ops, 8 * 2 + 8 * 1);
  EXPECT_EQ(c.flops, 8 * 1 + 8 * 2);
  EXPECT_EQ(c.min_bytes, 8 * 4 + 16 * 4 + 8 * 1 + 8 * 4 + 8 * 4);
}

TEST(Cost, DataDependentBoundsUseTheInputs) {
  std::string text = pat("graph.spmv", R"(
  params R, NNZ
  input  ptr : i32[R + 1] in [0, NNZ]
  input  col : i32[NNZ] in [0, R - 1]
  input  val : f32[NNZ]
  input  x   : f32[R]
  output y   : f32[R]
  y[r] = sum(k in cast(i64, ptr[r])..cast(i64, ptr[r + 1]): val[k] * x[col[k]])
)", "workload w { R = 4, NNZ = 6 }\n");
  auto l = load(text);
  ASSERT_TRUE(l.inst) << l.diags;
  std::vector<TensorData> in = {tensor_i(ScalarType::I32, {5}, {0, 2, 2, 5, 6}),
                                tensor_i(ScalarType::I32, {6}, {0, 1, 0, 2, 3, 1}),
                                TensorData(ScalarType::F32, {6}), TensorData(ScalarType::F32, {4})};
  CostFacts c = compute_cost(*l.inst, &in);
  EXPECT_TRUE(c.data_dependent);
  EXPECT_EQ(c.flops, 2.0 * 6);
  CostFacts g = compute_cost(*l.inst);  // on generated inputs: still counts, flagged
  EXPECT_TRUE(g.data_dependent);
}

TEST(Cost, LargeSuiteSizedInstanceIsFast) {
  std::string text = pat("linalg.trsv", R"(
  params N
  input  l : f32[N, N]
  input  b : f32[N]
  output x : f32[N]
  x[i] = b[i]
  for i in 0..N {
    for j in 0..i: x[i] = x[i] - l[i, j] * x[j]
    x[i] = x[i] / l[i, i]
  }
)", "workload w { N = 4096 }\n");
  auto l = load(text);
  ASSERT_TRUE(l.inst) << l.diags;
  CostFacts c = compute_cost(*l.inst);
  const double n = 4096;
  EXPECT_EQ(c.flops, n * (n - 1) + n);  // sub + mul per (i, j < i), one div per row
}

}  // namespace
}  // namespace ekb::ir
