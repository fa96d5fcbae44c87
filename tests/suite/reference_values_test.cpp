// Reference semantics against hand-computed results: one representative suite pattern per domain,
// bound to a tiny workload with chosen inputs. The patterns are the suite's own files, so a change
// to a pattern's meaning shows up here.
#include <gtest/gtest.h>

#include <cmath>

#include "ir/inputs.h"
#include "ir/interpreter.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "suite/suite.h"

namespace ekb::ir {
namespace {

const suite::Suite& embedded() {
  static const suite::Suite s = suite::Suite::load();
  return s;
}

// The suite's pattern `name` with one extra workload (`bindings` is the text inside its braces).
struct Bound {
  Module module;
  Instance inst;
};

std::unique_ptr<Bound> bind(const std::string& name, const std::string& bindings) {
  const suite::PatternEntry* p = embedded().find_pattern(name);
  EXPECT_NE(p, nullptr) << name;
  if (!p) return nullptr;
  auto b = std::make_unique<Bound>();
  b->module = parse_module(print_pattern(p->module.pattern) + "workload t micro { " + bindings + " }\n", name);
  Diagnostics diags(name);
  auto inst = instantiate(b->module, b->module.workloads[0], diags);
  EXPECT_TRUE(inst.has_value()) << diags.format();
  if (!inst) return nullptr;
  b->inst = std::move(*inst);  // points into b->module, which lives on the heap with it
  return b;
}

TensorData floats(ScalarType t, std::vector<int64_t> shape, std::vector<double> values) {
  TensorData d(t, std::move(shape));
  d.f = std::move(values);
  return d;
}

TensorData ints(ScalarType t, std::vector<int64_t> shape, std::vector<int64_t> values) {
  TensorData d(t, std::move(shape));
  d.i = std::move(values);
  return d;
}

void expect_near_all(const TensorData& got, const std::vector<double>& want, double tol = 1e-12) {
  ASSERT_EQ(got.num_elements(), static_cast<int64_t>(want.size()));
  for (size_t k = 0; k < want.size(); ++k) EXPECT_NEAR(got.as_double(k), want[k], tol) << "element " << k;
}

TEST(ReferenceValues, NnSoftmax) {
  auto b = bind("nn.softmax", "R = 1, C = 3, T = f32");
  ASSERT_TRUE(b);
  auto out = run_reference(b->inst, {floats(ScalarType::F32, {1, 3}, {1, 2, 3})});
  // e^-2, e^-1, 1 over their sum 1.5032147244080551
  expect_near_all(out[0], {0.09003057317038046, 0.24472847105479764, 0.6652409557748219});
}

TEST(ReferenceValues, QnnFullyConnectedRequantization) {
  auto b = bind("qnn.fc", "M = 1, IN = 2, OUT = 2, in_offset = 1, out_offset = -5, act_min = -8, act_max = 127");
  ASSERT_TRUE(b);
  auto out = run_reference(b->inst, {
      ints(ScalarType::I8, {1, 2}, {3, -4}),                // x
      ints(ScalarType::I8, {2, 2}, {2, 5, -1, 1}),          // w
      ints(ScalarType::I32, {2}, {10, 0}),                  // bias
      ints(ScalarType::I32, {2}, {1073741824, 2147483647}), // mult: 0.5, ~1.0
      ints(ScalarType::I32, {2}, {0, -1}),                  // shift
  });
  // o=0: acc = 10 + 4*2 + (-3)*5 = 3; rdmulh(3, 2^30) = round(1.5) = 2; 2 - 5 = -3.
  // o=1: acc = 4*(-1) + (-3)*1 = -7; rdmulh(-7, 2^31-1) = -7; rshift(-7, 1) = -4 (half away from
  //      zero); -4 - 5 = -9, clamped to act_min = -8.
  EXPECT_EQ(out[0].i, (std::vector<int64_t>{-3, -8}));
}

TEST(ReferenceValues, ImgRgbToGray) {
  auto b = bind("img.rgb_to_gray", "H = 1, W = 2");
  ASSERT_TRUE(b);
  auto out = run_reference(b->inst, {ints(ScalarType::U8, {1, 2, 3}, {255, 0, 0, 10, 200, 30})});
  // (255*4899 + 8192) >> 14 = 76; (10*4899 + 200*9617 + 30*1868 + 8192) >> 14 = 2036622 >> 14 = 124
  EXPECT_EQ(out[0].i, (std::vector<int64_t>{76, 124}));
}

TEST(ReferenceValues, AudioFir) {
  auto b = bind("audio.fir", "N = 3, K = 2, T = f32");
  ASSERT_TRUE(b);
  auto out = run_reference(b->inst, {floats(ScalarType::F32, {4}, {1, 2, 3, 4}),
                                     floats(ScalarType::F32, {2}, {0.5, -1})});
  expect_near_all(out[0], {-1.5, -2.0, -2.5});  // y[n] = 0.5 x[n] - x[n+1]
}

TEST(ReferenceValues, LinalgTrisolv) {
  auto b = bind("linalg.trisolv", "N = 2, T = f64");
  ASSERT_TRUE(b);
  // Ld = L + 2I = [[3, .], [2, 5]]; x0 = 6/3 = 2; x1 = (7 - 2*2)/5 = 0.6. The upper triangle is unused.
  auto out = run_reference(b->inst, {floats(ScalarType::F64, {2, 2}, {1, 99, 2, 3}),
                                     floats(ScalarType::F64, {2}, {6, 7})});
  expect_near_all(out[0], {2.0, 0.6});
}

TEST(ReferenceValues, RoboticsNearestNeighbourWithTie) {
  auto b = bind("robotics.nn_bruteforce", "M = 3, N = 3, T = f32");
  ASSERT_TRUE(b);
  auto out = run_reference(b->inst, {
      floats(ScalarType::F32, {3, 3}, {0.9, 0.1, 0, 4, 4, 4, 0.5, 0, 0}),  // queries
      floats(ScalarType::F32, {3, 3}, {0, 0, 0, 1, 0, 0, 5, 5, 5}),        // reference points
  });
  // q0 is nearest r1 (0.01 + 0.01); q1 nearest r2 (3 * 1); q2 is equidistant from r0 and r1: the first wins.
  EXPECT_EQ(out[0].i, (std::vector<int64_t>{1, 2, 0}));
  expect_near_all(out[1], {0.02, 3.0, 0.25}, 1e-12);
}

TEST(ReferenceValues, TransformerRmsNorm) {
  auto b = bind("transformer.rmsnorm", "S = 1, D = 2, T = f32");
  ASSERT_TRUE(b);
  auto out = run_reference(b->inst, {floats(ScalarType::F32, {1, 2}, {3, 4}),
                                     floats(ScalarType::F32, {2}, {1, 2})});
  double r = 1.0 / std::sqrt(25.0 / 2 + 1e-5);  // mean of squares 12.5, eps 1e-5
  expect_near_all(out[0], {3 * r, 8 * r});
}

// A graph against an independent forward pass of the same network, written as plain loops.
TEST(ReferenceValues, GraphAnomalyAutoencoderMatchesPlainForwardPass) {
  auto b = bind("graph.ad_autoencoder", "N = 2");
  ASSERT_TRUE(b);
  std::vector<TensorData> in = generate_inputs(b->inst, 7);
  auto out = run_reference(b->inst, in);
  std::vector<double> h(in[0].f.begin(), in[0].f.end());  // [N, 640]
  const int dims[] = {640, 128, 128, 128, 128, 8, 128, 128, 128, 128, 640};
  for (int layer = 0; layer < 10; ++layer) {
    int din = dims[layer], dout = dims[layer + 1];
    const TensorData& w = in[1 + 2 * layer];
    const TensorData& bias = in[2 + 2 * layer];
    std::vector<double> next(2 * dout);
    for (int n = 0; n < 2; ++n)
      for (int j = 0; j < dout; ++j) {
        double acc = bias.f[j];
        for (int i = 0; i < din; ++i) acc += h[n * din + i] * w.f[j * din + i];
        next[n * dout + j] = layer < 9 ? std::max(acc, 0.0) : acc;  // the last layer is linear
      }
    h = std::move(next);
  }
  expect_near_all(out[0], h, 1e-9);
}

TEST(ReferenceValues, ImgNv12ToRgbFixedPoint) {
  auto b = bind("img.nv12_to_rgb", "H = 2, W = 2");
  ASSERT_TRUE(b);
  auto out = run_reference(b->inst, {ints(ScalarType::U8, {2, 2}, {16, 235, 100, 50}),
                                     ints(ScalarType::U8, {1, 1, 2}, {90, 200})});  // U = 90, V = 200
  // yy = max(Y - 16, 0) * 1220542 + 2^19; V - 128 = 72, U - 128 = -38.
  // Y = 16:  R = (524288 + 1673527 * 72) >> 20 = 120493944 >> 20 = 115; G, B negative -> 0.
  // Y = 235: yy = 267822986; R = 388316930 >> 20 = 370 -> 255; G = 222023296 >> 20 = 211;
  //          B = 187413998 >> 20 = 178.
  // Y = 100: yy = 103049816; R = 223543760 >> 20 = 213; G = 57250126 >> 20 = 54; B = 22640828 >> 20 = 21.
  // Y = 50:  yy = 42022716; R = 162516660 >> 20 = 154; G = -3776974 -> 0; B = -38386272 -> 0.
  EXPECT_EQ(out[0].i, (std::vector<int64_t>{115, 0, 0, 255, 211, 178, 213, 54, 21, 154, 0, 0}));
}

TEST(ReferenceValues, ImgEqualizeHistRoundsHalfToEven) {
  auto b = bind("img.equalize_hist", "H = 1, W = 4");
  ASSERT_TRUE(b);
  auto out = run_reference(b->inst, {ints(ScalarType::U8, {1, 4}, {0, 0, 1, 2})});
  // hist = {2, 1, 1}, i0 = 0, scale = 255 / (4 - 2) = 127.5; lut[1] = round_even(1 * 127.5) = 128,
  // lut[2] = 2 * 127.5 = 255, lut[0] = 0.
  EXPECT_EQ(out[0].i, (std::vector<int64_t>{0, 0, 128, 255}));
}

TEST(ReferenceValues, ImgCensusTransformBitOrder) {
  auto b = bind("img.census_transform", "H = 3, W = 3");
  ASSERT_TRUE(b);
  auto out = run_reference(b->inst, {ints(ScalarType::U8, {3, 3}, {10, 20, 30, 40, 50, 60, 70, 80, 90})});
  // Centre (1, 1) = 50: the clamped 5x5 window's rows are image rows 0, 0, 1, 2, 2; every value of the
  // two copies of row 0 (bits 0-9) and 40, 40 left of the centre (bits 10, 11) is darker: 2^12 - 1.
  // Corner (0, 0) = 10 has no darker neighbour; (2, 2) = 90: every other bit but those of 90 itself.
  ASSERT_EQ(out[0].i.size(), 9u);
  EXPECT_EQ(out[0].i[0], 0);
  EXPECT_EQ(out[0].i[4], 4095);
  // (0, 1) = 20: darker are the 10s at columns -1, 0 of rows -2, -1, 0 -> window cells (0..2, 0..1)
  // = k 0, 1, 5, 6, 10, 11 -> bits 0, 1, 5, 6, 10, 11 = 3171.
  EXPECT_EQ(out[0].i[1], 3171);
}

TEST(ReferenceValues, AudioGoertzelMatchesDftBin) {
  auto b = bind("audio.goertzel", "F = 1, N = 4, NB = 1, T = f64");
  ASSERT_TRUE(b);
  auto out = run_reference(b->inst, {floats(ScalarType::F64, {1, 4}, {1, 2, 3, 4}),
                                     ints(ScalarType::I32, {1}, {1})});
  // X[1] = 1 - 2j - 3 + 4j = -2 + 2j, |X[1]|^2 = 8 (c = 2 cos(pi / 2) = 0: s = 1, 2, 2, 2).
  expect_near_all(out[0], {8.0}, 1e-12);
}

TEST(ReferenceValues, AudioMulawEncodeG711) {
  auto b = bind("audio.mulaw_encode", "N = 5");
  ASSERT_TRUE(b);
  auto out = run_reference(b->inst, {ints(ScalarType::I16, {5}, {0, 1000, -1000, 32767, -32768})});
  // 0: v = 33, seg 0, mantissa 0 -> 0 ^ 0xFF = 255.  +-1000: v = 250 + 33 = 283, seg 3,
  // (283 >> 4) & 15 = 1 -> 0x31, ^ 0xFF = 206 and ^ 0x7F = 78.  Full scale: v clipped to 8159 + 33
  // = 8192 > 8191, seg 8 -> 0x7F ^ mask: 0x80 = 128 and 0.
  EXPECT_EQ(out[0].i, (std::vector<int64_t>{255, 206, 78, 128, 0}));
}

TEST(ReferenceValues, AudioDeltaFeaturesKaldiWindows) {
  auto b = bind("audio.delta_features", "T_ = 3, D = 1, T = f64");
  ASSERT_TRUE(b);
  auto out = run_reference(b->inst, {floats(ScalarType::F64, {3, 1}, {1, 2, 4})});
  // delta_0 = -0.2*1 - 0.1*1 + 0.1*2 + 0.2*4 = 0.7; delta_1 = -0.2 - 0.1 + 0.4 + 0.8 = 0.9;
  // delta_2 = -0.2*1 - 0.1*2 + 0.1*4 + 0.2*4 = 0.8.
  // delta2 with [4, 4, 1, -4, -10, -4, 1, 4, 4] / 100: t = 0: (4+4+1-4-10)*1 - 4*2 + (1+4+4)*4 = 23;
  // t = 1: (4+4+1-4)*1 - 10*2 + (-4+1+4+4)*4 = 5; t = 2: (4+4+1)*1 - 4*2 + (-10-4+1+4+4)*4 = -19.
  expect_near_all(out[0], {1, 0.7, 0.23, 2, 0.9, 0.05, 4, 0.8, -0.19}, 1e-12);
}

TEST(ReferenceValues, AudioFftRadix2MatchesDft) {
  auto b = bind("audio.fft_radix2", "B = 1, LOG2N = 2, T = f64");
  ASSERT_TRUE(b);
  auto out = run_reference(b->inst, {floats(ScalarType::F64, {1, 4}, {1, 2, 3, 4}),
                                     floats(ScalarType::F64, {1, 4}, {0, 0, 0, 0})});
  // DFT of 1, 2, 3, 4: X0 = 10, X1 = -2 + 2j, X2 = -2, X3 = -2 - 2j.
  expect_near_all(out[0], {10, -2, -2, -2});
  expect_near_all(out[1], {0, 2, 0, -2});
}

TEST(ReferenceValues, AudioFirLatticeOneStage) {
  auto b = bind("audio.fir_lattice", "M = 1, N = 2, T = f64");
  ASSERT_TRUE(b);
  auto out = run_reference(b->inst, {floats(ScalarType::F64, {2}, {1, 2}),     // x
                                     floats(ScalarType::F64, {1}, {0.5}),      // k
                                     floats(ScalarType::F64, {1}, {0})});      // zi
  // f1(0) = 1 + 0.5 * 0 = 1; g0(0) = 1; f1(1) = 2 + 0.5 * 1 = 2.5; final state g0(1) = x(1) = 2.
  expect_near_all(out[0], {1, 2.5});
  expect_near_all(out[1], {2});
}


TEST(ReferenceValues, GraphMobileNetV3BlockSqueezeExcite) {
  auto b = bind("graph.mbv3_block", "N = 1, H = 1, W = 2, C = 1, E = 1, S = 1, K = 1");
  ASSERT_TRUE(b);
  auto f = [](std::vector<int64_t> shape, std::vector<double> v) { return floats(ScalarType::F32, shape, v); };
  auto out = run_reference(b->inst, {f({1, 1, 2, 1}, {1, -2}),                  // x
                                     f({1, 1}, {2}), f({1}, {0.5}),             // expand w, b
                                     f({1, 1, 1}, {1.2}), f({1}, {-0.25}),      // depthwise w, b
                                     f({1, 1}, {0.6}), f({1}, {-0.375}),        // SE reduce w, b
                                     f({1, 1}, {1.5}), f({1}, {-1.5}),          // SE expand w, b
                                     f({1, 1}, {0.4}), f({1}, {0.1})});         // project w, b
  // hswish(v) = v * relu6(v + 3) / 6.  Pixel 0: ea = 0.5 + 2 = 2.5, e = 2.5 * 5.5 / 6 = 2.291667,
  // da = -0.25 + 1.2 e = 2.5, d0 = 2.291667.  Pixel 1: ea = 0.5 - 4 = -3.5, e = 0, da = -0.25,
  // d1 = -0.25 * 2.75 / 6 = -0.114583.  SE: s = (d0 + d1) / 2 = 1.088542, r = relu(-0.375 + 0.6 s)
  // = 0.278125, g = relu6(-1.5 + 1.5 r + 3) / 6 = 0.31953125.  y = x + 0.1 + 0.4 d g:
  // 1.1 + 0.4 * 2.291667 * 0.31953125 = 1.392904;  -1.9 - 0.4 * 0.114583 * 0.31953125 = -1.914645.
  expect_near_all(out[0], {1.3929036458333335, -1.9146451822916666}, 1e-12);
}

TEST(ReferenceValues, GraphLlmDecodeStepRopeAndCache) {
  auto b = bind("graph.llm_decode_step", "D = 2, NKV = 1, G = 1, DH2 = 1, FF = 1, P = 1, LMAX = 2, T = f64");
  ASSERT_TRUE(b);
  auto f = [](std::vector<int64_t> shape, std::vector<double> v) { return floats(ScalarType::F64, shape, v); };
  std::vector<double> identity = {1, 0, 0, 1};  // [c][d]: head half c reads hidden dim d
  auto out = run_reference(b->inst, {f({2}, {3, 4}), f({2}, {1, 1}),             // x, g1
                                     f({1, 1, 2, 1, 2}, identity),                 // wq
                                     f({1, 2, 1, 2}, identity),                    // wk
                                     f({1, 2, 1, 2}, identity),                    // wv
                                     f({1, 2, 2, 1}, {0, 0, 9, 9}),                // kc: position 0 = (0, 0); slot 1 unused
                                     f({1, 2, 2, 1}, {1, -1, 9, 9}),               // vc: position 0 = (1, -1)
                                     f({2, 1, 1, 2, 1}, identity),                 // wo
                                     f({2}, {1, 1}),                               // g2
                                     f({1, 2}, {1, 0}), f({1, 2}, {0, 1}), f({2, 1}, {1, 2})});  // wg, wu, wd
  // u1 = x / sqrt(12.5 + 1e-5) = (0.848528, 1.131370) = q0 = k0 = vnew.  RoPE at position 1 with
  // inv_freq 1: q = (u0 cos 1 - u1 sin 1, u1 cos 1 + u0 sin 1) = (-0.493554, 1.325294) = knew.
  // Scores over positions 0 (cached key 0) and 1 (the new key): 0 and |q|^2 / sqrt(2) = 1.414212,
  // p0 = 1 / (1 + e^1.414212) = 0.195570.  h = x + p0 (1, -1) + (1 - p0) u1;
  // u2 = h / rms(h); y = h + silu(u2_0) u2_1 (1, 2).
  double p0 = 0.1955704954831299;
  expect_near_all(out[1], {-0.49355383658141466, 1.3252935563100903}, 1e-9);  // knew
  expect_near_all(out[2], {0.8485277980128058, 1.1313703973504077}, 1e-9);    // vnew
  // The MLP adds a multiple of wd = (1, 2), so y0 - y1 / 2 = h0 - h1 / 2 whatever it computes.
  EXPECT_NEAR(out[0].f[0] - out[0].f[1] / 2, 3 + p0 + (1 - p0) * 0.8485277980128058
                                                 - (4 - p0 + (1 - p0) * 1.1313703973504077) / 2, 1e-9);
  expect_near_all(out[0], {4.575435769724222, 6.1091061889162335}, 1e-9);
}


TEST(ReferenceValues, LinalgDurbinLevinsonRecursion) {
  auto b = bind("linalg.durbin", "N = 3, T = f64");
  ASSERT_TRUE(b);
  auto out = run_reference(b->inst, {floats(ScalarType::F64, {3}, {0.5, 0.2, 0.1})});
  // k=1: beta = 3/4, alpha = -(0.2 - 0.25)/(3/4) = 1/15, y = (-8/15, 1/15).
  // k=2: beta = (224/225)(3/4) = 56/75, sum = 0.2(-8/15) + 0.5(1/15) = -11/150,
  //      alpha = -(0.1 - 11/150)/(56/75) = -1/28, y = (-8/15 - 1/420, 1/15 + 8/420, -1/28).
  // Check: the Toeplitz rows (1, .5, .2), (.5, 1, .5), (.2, .5, 1) times y give -r.
  expect_near_all(out[0], {-15.0 / 28, 3.0 / 35, -1.0 / 28});
}

TEST(ReferenceValues, LinalgFloydWarshallShortestPaths) {
  auto b = bind("linalg.floyd_warshall", "N = 3, T = i32");
  ASSERT_TRUE(b);
  auto out = run_reference(b->inst, {ints(ScalarType::I32, {3, 3}, {1, 5, 9, 1, 1, 2, 4, 1, 1})});
  // 0->2 via 1: 5 + 2 = 7 < 9; 2->0 via 1: 1 + 1 = 2 < 4; 0->1 stays 5 (via 2 would be 10).
  EXPECT_EQ(out[0].i, (std::vector<int64_t>{1, 5, 7, 1, 1, 2, 2, 1, 1}));
}

TEST(ReferenceValues, LinalgNussinovNestedPairs) {
  auto b = bind("linalg.nussinov", "N = 8");
  ASSERT_TRUE(b);
  // Bases 1 2 0 3 0 3 1 2: pairs (0,7) 1+2, (1,6) 2+1, (2,5) 0+3 nest into three base pairs; the
  // adjacent (3,4) and (5,6)-style pairs do not count (i < j-1 is required to add a match).
  auto out = run_reference(b->inst, {ints(ScalarType::I8, {8}, {1, 2, 0, 3, 0, 3, 1, 2})});
  std::vector<int64_t> want(64, 0);
  const int64_t row0[] = {0, 0, 0, 0, 0, 1, 2, 3}, row1[] = {0, 0, 0, 0, 0, 1, 2, 2}, row2[] = {0, 0, 0, 0, 0, 1, 1, 1};
  for (int j = 0; j < 8; ++j) want[j] = row0[j], want[8 + j] = row1[j], want[16 + j] = row2[j];
  EXPECT_EQ(out[0].i, want);
}

TEST(ReferenceValues, RoboticsQuaternionProductNormalized) {
  auto b = bind("robotics.quat_mul_normalize", "N = 2, T = f64");
  ASSERT_TRUE(b);
  // (x, y, z, w): i * j = k; and (2 * identity) * (x = 1, w = 1) = (2, 0, 0, 2), normalized.
  auto out = run_reference(b->inst, {floats(ScalarType::F64, {2, 4}, {1, 0, 0, 0, 0, 0, 0, 2}),
                                     floats(ScalarType::F64, {2, 4}, {0, 1, 0, 0, 1, 0, 0, 1})});
  const double h = std::sqrt(0.5);
  expect_near_all(out[0], {0, 0, 1, 0, h, 0, 0, h});
}

TEST(ReferenceValues, RoboticsChamferDistanceTransform) {
  auto b = bind("robotics.distance_transform", "H = 2, W = 2");
  ASSERT_TRUE(b);
  // One feature pixel at (0, 0): its 4-neighbours are one step a = 62587/65536 away, the diagonal
  // one b = 89738/65536 (OpenCV's 0.955 and 1.3693 in 16.16 fixed point).
  auto out = run_reference(b->inst, {ints(ScalarType::U8, {2, 2}, {0, 7, 7, 200})});
  expect_near_all(out[0], {0, 62587.0 / 65536, 62587.0 / 65536, 89738.0 / 65536});
}

TEST(ReferenceValues, RoboticsMahalanobisGating) {
  auto b = bind("robotics.mahalanobis_gating", "NT = 2, ND = 3, T = f64");
  ASSERT_TRUE(b);
  auto out = run_reference(b->inst, {
      floats(ScalarType::F64, {2, 2}, {0, 0, 10, 10}),                   // predicted measurements
      floats(ScalarType::F64, {2, 2, 2}, {2, 0, 0, 0.5, 1, 0, 0, 1}),    // S_0 = diag(2, .5), S_1 = I
      floats(ScalarType::F64, {3, 2}, {2, 0, 0, 1, 4, 4}),               // detections
  });
  // Track 0: 2^2/2 = 2, 1^2/0.5 = 2 (a tie: the first wins), 16/2 + 16/0.5 = 40.
  // Track 1: 64 + 100, 100 + 81, 36 + 36 = 72: nearest is detection 2, outside the 9.21 gate.
  expect_near_all(out[0], {2, 2, 40, 164, 181, 72});
  EXPECT_EQ(out[1].i, (std::vector<int64_t>{0, -1}));
}

TEST(ReferenceValues, NnTransposeConvScattersWithCropping) {
  // One row: x = [1, 2] scatters through w = [1, 10, 100] at stride 2 into columns 0..2 and 2..4;
  // PR = 1 crops column 4 (2 * 100). Bias 0.5.
  auto b = bind("nn.transpose_conv",
                "N = 1, H = 1, W = 2, C = 1, K = 1, KH = 1, KW = 3, S = 2, PT = 0, PB = 0, PL = 0, PR = 1, T = f32");
  ASSERT_TRUE(b);
  auto out = run_reference(b->inst, {floats(ScalarType::F32, {1, 1, 2, 1}, {1, 2}),
                                     floats(ScalarType::F32, {1, 1, 3, 1}, {1, 10, 100}),
                                     floats(ScalarType::F32, {1}, {0.5})});
  expect_near_all(out[0], {1.5, 10.5, 102.5, 20.5});
}

TEST(ReferenceValues, NnResizeNearestHalfPixelAndBilinearAlignCorners) {
  // Nearest, 3 -> 5 columns: source floor((ox + 0.5) * 3 / 5) = 0, 0, 1, 2, 2.
  auto nearest = bind("nn.resize_nearest", "N = 1, H = 1, W = 3, C = 1, OH = 1, OW = 5, T = f32");
  ASSERT_TRUE(nearest);
  auto out = run_reference(nearest->inst, {floats(ScalarType::F32, {1, 1, 3, 1}, {7, 8, 9})});
  expect_near_all(out[0], {7, 7, 8, 9, 9});
  // Bilinear with align_corners, 3 -> 5 columns: sources 0, 0.5, 1, 1.5, 2 (corners map to corners).
  auto bilinear = bind("nn.resize_bilinear_ac", "N = 1, H = 1, W = 3, C = 1, OH = 1, OW = 5, T = f32");
  ASSERT_TRUE(bilinear);
  out = run_reference(bilinear->inst, {floats(ScalarType::F32, {1, 1, 3, 1}, {0, 10, 30})});
  expect_near_all(out[0], {0, 5, 10, 20, 30}, 1e-6);  // f32 coordinates: 0.5 is exact, no rounding
}

TEST(ReferenceValues, NnDepthMultiplierAndChannelShuffleIndexing) {
  // Depth multiplier 2: output channel oc reads input channel oc / 2.
  auto dw = bind("nn.dwconv_multiplier",
                 "N = 1, H = 1, W = 1, C = 2, M = 2, KH = 1, KW = 1, S = 1, PT = 0, PB = 0, PL = 0, PR = 0, T = f32");
  ASSERT_TRUE(dw);
  auto out = run_reference(dw->inst, {floats(ScalarType::F32, {1, 1, 1, 2}, {3, 5}),
                                      floats(ScalarType::F32, {1, 1, 4}, {1, 2, 3, 4}),
                                      floats(ScalarType::F32, {4}, {0, 0, 0, 1})});
  expect_near_all(out[0], {3, 6, 15, 21});
  // Shuffle of 6 channels in 2 groups: view [2, 3], transpose, flatten -> x0 x3 x1 x4 x2 x5.
  auto shuffle = bind("nn.channel_shuffle", "N = 1, H = 1, W = 1, C = 6, G = 2, T = f32");
  ASSERT_TRUE(shuffle);
  out = run_reference(shuffle->inst, {floats(ScalarType::F32, {1, 1, 1, 6}, {10, 11, 12, 13, 14, 15})});
  expect_near_all(out[0], {10, 13, 11, 14, 12, 15});
}

TEST(ReferenceValues, NnLocalResponseNormClipsTheChannelWindow) {
  auto b = bind("nn.local_response_norm", "N = 1, H = 1, W = 1, C = 3, R = 1, T = f32");
  ASSERT_TRUE(b);
  auto out = run_reference(b->inst, {floats(ScalarType::F32, {1, 1, 1, 3}, {1, 2, 3})});
  // Sums of squares over the clipped windows: 1+4 = 5, 1+4+9 = 14, 4+9 = 13; x / (1 + 2e-5 s)^0.75.
  expect_near_all(out[0], {1 / std::pow(1 + 2e-5 * 5, 0.75), 2 / std::pow(1 + 2e-5 * 14, 0.75),
                           3 / std::pow(1 + 2e-5 * 13, 0.75)});
  expect_near_all(out[0], {0.9999250065618985, 1.9995801028735958, 2.9994151330557886}, 1e-12);
}

TEST(ReferenceValues, NnLstmCellGateOrder) {
  auto b = bind("nn.lstm_cell", "B = 1, I = 1, U = 1, T = f64");
  ASSERT_TRUE(b);
  auto out = run_reference(b->inst, {
      floats(ScalarType::F64, {1, 1}, {1}),               // x
      floats(ScalarType::F64, {1, 1}, {0.5}),             // h
      floats(ScalarType::F64, {1, 1}, {2}),               // c
      floats(ScalarType::F64, {4, 1}, {1, 2, 3, 4}),      // wx rows: i, f, g, o
      floats(ScalarType::F64, {4, 1}, {0.5, 0, -1, 1}),   // wh
      floats(ScalarType::F64, {4}, {0, 1, 0, -1}),        // b
  });
  // a_i = 1 + 0.25 = 1.25, a_f = 1 + 2 = 3, a_g = 3 - 0.5 = 2.5, a_o = -1 + 4 + 0.5 = 3.5.
  // c' = sig(3) * 2 + sig(1.25) * tanh(2.5) = 2.6720434106309385; h' = sig(3.5) * tanh(c').
  expect_near_all(out[0], {0.9614592345698713}, 1e-12);
  expect_near_all(out[1], {2.6720434106309385}, 1e-12);
}

TEST(ReferenceValues, NnGroupNormOneGroupSpansChannels) {
  auto b = bind("nn.group_norm", "N = 1, H = 1, W = 2, C = 2, G = 1, T = f64");
  ASSERT_TRUE(b);
  auto out = run_reference(b->inst, {floats(ScalarType::F64, {1, 1, 2, 2}, {1, 3, 5, 7}),
                                     floats(ScalarType::F64, {2}, {1, 2}),    // gamma
                                     floats(ScalarType::F64, {2}, {0, 1})});  // beta
  // One group over all four values: mean 4, biased variance (9 + 1 + 1 + 9) / 4 = 5.
  const double s = 1 / std::sqrt(5 + 1e-5);
  expect_near_all(out[0], {-3 * s, -1 * s * 2 + 1, 1 * s, 3 * s * 2 + 1});
}

TEST(ReferenceValues, NnSsdBoxDecodeAndBoxIou) {
  auto dec = bind("nn.ssd_box_decode", "B = 1, A = 1, T = f64");
  ASSERT_TRUE(dec);
  // Anchor (yc, xc, h, w) = (0.5, 0.5, 0.2, 0.4); encoding (1, -2, 0, 5 ln 1.5):
  // yc = 0.1 * 0.2 + 0.5 = 0.52, xc = -0.2 * 0.4 + 0.5 = 0.42, h = 0.2, w = 1.5 * 0.4 = 0.6.
  auto out = run_reference(dec->inst, {floats(ScalarType::F64, {1, 1, 4}, {1, -2, 0, 5 * std::log(1.5)}),
                                       floats(ScalarType::F64, {1, 4}, {0.5, 0.5, 0.2, 0.4})});
  expect_near_all(out[0], {0.42, 0.12, 0.62, 0.72}, 1e-12);
  auto iou = bind("nn.box_iou", "A = 1, B = 2, T = f64");
  ASSERT_TRUE(iou);
  // (0, 0)-(0.5, 0.5) against (0.25, 0.25)-(0.75, 0.75) given with swapped corners: 0.0625 / 0.4375;
  // a box of zero height has IoU 0.
  out = run_reference(iou->inst, {floats(ScalarType::F64, {1, 4}, {0, 0, 0.5, 0.5}),
                                  floats(ScalarType::F64, {2, 4}, {0.75, 0.75, 0.25, 0.25, 0.1, 0.1, 0.1, 0.4})});
  expect_near_all(out[0], {1.0 / 7, 0.0});
}

TEST(ReferenceValues, QnnSoftmaxS8GemmlowpFixedPoint) {
  auto b = bind("qnn.softmax_s8", "R = 1, C = 3");
  ASSERT_TRUE(b);
  auto out = run_reference(b->inst, {ints(ScalarType::I8, {1, 3}, {10, 2, -7}),
                                     ints(ScalarType::I32, {1}, {1073741824}),  // mult 0.5
                                     ints(ScalarType::I32, {1}, {23})});        // input scale 0.5 * 2^23 / 2^26 = 1/16
  // Differences 0, -8, -17 at scale 1/16: exp(0), exp(-0.5), exp(-1.0625) over their sum 1.95213
  // = 0.51226, 0.31070, 0.17704; times 256 minus 128: 3.14, -48.46, -82.68.
  EXPECT_EQ(out[0].i, (std::vector<int64_t>{3, -48, -83}));
}

TEST(ReferenceValues, QnnHardSwishInt16FixedPoint) {
  auto b = bind("qnn.hard_swish", "L = 6, in_zero_point = 0, out_zero_point = 0");
  ASSERT_TRUE(b);
  auto x = ints(ScalarType::I8, {6}, {100, -100, -3, 127, 0, -128});
  // Output multiplier 0.5 * 2^-6 = 1/128 (output scale = input scale s); relu-ish multiplier 0.5:
  // s = 0.5 * 128 * 3 / 32768. Real h-swish x relu6(x + 3) / 6 on the same scale: 59.77, -40.23,
  // -1.49, 79.25, 0, -48.0.
  auto out = run_reference(b->inst, {x, ints(ScalarType::I32, {1}, {16384}), ints(ScalarType::I32, {1}, {-6}),
                                     ints(ScalarType::I32, {1}, {16384}), ints(ScalarType::I32, {1}, {0})});
  EXPECT_EQ(out[0].i, (std::vector<int64_t>{60, -40, -1, 79, 0, -48}));
  // A positive relu exponent takes the saturating left-shift path (hand-run TFLite steps, x = 100:
  // v = 95, hi = 12160, pre = srdhm16(12160, 20000) = 7422; reluish: 12160 << 1 = 24320,
  // srdhm16(., 30000) = 22266, << 1 saturates to 32767, (32767 + 32768) >> 1 = 32767;
  // sdhm16(32767, 7422) = 7421; rshift(7421, 7) = 58; 58 - 3 = 55).
  auto b2 = bind("qnn.hard_swish", "L = 6, in_zero_point = 5, out_zero_point = -3");
  ASSERT_TRUE(b2);
  auto out2 = run_reference(b2->inst, {x, ints(ScalarType::I32, {1}, {20000}), ints(ScalarType::I32, {1}, {-7}),
                                       ints(ScalarType::I32, {1}, {30000}), ints(ScalarType::I32, {1}, {2})});
  EXPECT_EQ(out2[0].i, (std::vector<int64_t>{55, -3, -5, 71, -4, -3}));
}

TEST(ReferenceValues, QnnSvdfOneStep) {
  auto b = bind("qnn.svdf", "B = 1, IN = 1, U = 1, RANK = 1, MEM = 2, in_offset = 1, out_offset = -3");
  ASSERT_TRUE(b);
  auto out = run_reference(b->inst, {
      ints(ScalarType::I8, {1, 1}, {3}),            // x
      ints(ScalarType::I8, {1, 1}, {5}),            // w_feat
      ints(ScalarType::I16, {1, 2}, {2, 3}),        // w_time
      ints(ScalarType::I32, {1}, {2}),              // bias
      ints(ScalarType::I16, {1, 1, 2}, {7, 9}),     // state_in
      ints(ScalarType::I32, {1}, {1073741824}),     // mult1 0.5
      ints(ScalarType::I32, {1}, {0}),              // shift1
      ints(ScalarType::I32, {1}, {1073741824}),     // mult2 0.5
      ints(ScalarType::I32, {1}, {-1}),             // shift2
  });
  // Feature: 5 * (3 + 1) = 20, * 0.5 = 10 enters the last slot after the shift: state [9, 10].
  // Time: 2 * 9 + 3 * 10 = 48; + bias 2 = 50; * 0.5 = 25; rounding shift by 1: 12.5 -> 13; - 3 = 10.
  EXPECT_EQ(out[0].i, (std::vector<int64_t>{9, 10}));
  EXPECT_EQ(out[1].i, (std::vector<int64_t>{10}));
}

TEST(ReferenceValues, QnnResizeBilinearS8HalfPixelQ10) {
  auto b = bind("qnn.resize_bilinear_s8", "H = 2, W = 2, C = 1, OH = 4, OW = 4");
  ASSERT_TRUE(b);
  auto out = run_reference(b->inst, {ints(ScalarType::I8, {2, 2, 1}, {0, 100, -100, 20})});
  // Scale (2048 + 2) / 4 = 512: output rows/columns 0..3 sit at source 512 o - 256 (Q10), i.e.
  // -0.25 (clamped to pixel 0), 0.25, 0.75, 1.25 (clamped to pixel 1). Element (1, 1):
  // 100 * 0.1875 - 100 * 0.1875 + 20 * 0.0625 = 1.25 -> 1; (2, 1): -56.25 + 6.25 + 3.75 = -46.25 -> -46.
  EXPECT_EQ(out[0].i, (std::vector<int64_t>{0, 25, 75, 100, -25, 1, 54, 80, -75, -46, 11, 40, -100, -70, -10, 20}));
}

TEST(ReferenceValues, TransformerTopkLogitsFirstIndexOnTies) {
  auto b = bind("transformer.topk_logits", "V = 5, K = 3, T = f32");
  ASSERT_TRUE(b);
  auto out = run_reference(b->inst, {floats(ScalarType::F32, {5}, {1, 5, 3, 5, -2})});
  EXPECT_EQ(out[0].i, (std::vector<int64_t>{1, 3, 2}));
  expect_near_all(out[1], {5, 5, 3});
}

TEST(ReferenceValues, TransformerLogitPenaltiesLlamaCpp) {
  auto b = bind("transformer.logit_penalties", "V = 4, NP = 3, T = f32");
  ASSERT_TRUE(b);
  auto out = run_reference(b->inst, {floats(ScalarType::F32, {4}, {2, -1, 0.5, 3}),
                                     ints(ScalarType::I32, {3}, {0, 1, 0}),
                                     floats(ScalarType::F32, {1}, {2}),      // repeat penalty
                                     floats(ScalarType::F32, {1}, {0.25}),   // frequency penalty
                                     floats(ScalarType::F32, {1}, {0.5})});  // presence penalty
  // Token 0 seen twice: 2 / 2 - 2 * 0.25 - 0.5 = 0; token 1 once: -1 * 2 - 0.25 - 0.5 = -2.75.
  expect_near_all(out[0], {0, -2.75, 0.5, 3});
}

TEST(ReferenceValues, TransformerQ40GemvNibbleOrder) {
  auto b = bind("transformer.q4_0_gemv", "K = 32, N = 1, T = f32");
  ASSERT_TRUE(b);
  std::vector<double> x(32, 0.0);
  x[0] = 1;
  x[16] = 2;
  x[1] = 4;
  std::vector<int64_t> qs(16, 0x88);  // both nibbles 8: weight 0
  qs[0] = 0x3A;                       // weight 0 = 10 - 8 = 2, weight 16 = 3 - 8 = -5
  qs[1] = 0x8F;                       // weight 1 = 15 - 8 = 7, weight 17 = 0
  auto out = run_reference(b->inst, {floats(ScalarType::F32, {32}, x), ints(ScalarType::U8, {1, 1, 16}, qs),
                                     floats(ScalarType::F16, {1, 1}, {0.5})});
  expect_near_all(out[0], {0.5 * (1 * 2 + 2 * -5 + 4 * 7)});  // 10
}

TEST(ReferenceValues, NnGreedyNmsSuppressedBoxesDoNotSuppress) {
  auto b = bind("nn.nms_greedy", "A = 3");
  ASSERT_TRUE(b);
  // Boxes in score order. Box 1 overlaps box 0 with IoU 0.2 / 0.3 = 0.67 and is suppressed. Box 2
  // overlaps box 0 with IoU 0.15 / 0.35 = 0.43 (kept) and box 1 with 0.67, but box 1 is not kept.
  auto out = run_reference(b->inst, {floats(ScalarType::F32, {3, 4}, {0, 0, 0.5, 0.5,
                                                                       0, 0.1, 0.5, 0.6,
                                                                       0, 0.2, 0.5, 0.7})});
  EXPECT_EQ(out[0].i, (std::vector<int64_t>{1, 0, 1}));
}

TEST(ReferenceValues, NnMaxPoolArgmaxFlatIndexFirstOnTies) {
  auto b = bind("nn.maxpool_argmax", "N = 1, H = 2, W = 2, C = 2, KH = 2, KW = 2, SH = 2, SW = 2, T = f32");
  ASSERT_TRUE(b);
  // Channel 0: 1, 5, 3, 2 -> 5 at (0, 1): index (0 * 2 + 1) * 2 + 0 = 2.
  // Channel 1: 9, 0, 9, -1 -> the first 9, at (0, 0): index 1.
  auto out = run_reference(b->inst, {floats(ScalarType::F32, {1, 2, 2, 2}, {1, 9, 5, 0, 3, 9, 2, -1})});
  expect_near_all(out[0], {5, 9});
  EXPECT_EQ(out[1].i, (std::vector<int64_t>{2, 1}));
}

TEST(ReferenceValues, QnnLogisticS8GemmlowpFixedPoint) {
  auto b = bind("qnn.logistic_s8", "L = 8, in_zero_point = 0");
  ASSERT_TRUE(b);
  auto out = run_reference(b->inst, {ints(ScalarType::I8, {8}, {-100, -16, -1, 0, 1, 16, 100, 127}),
                                     ints(ScalarType::I32, {1}, {1073741824}),  // mult 0.5
                                     ints(ScalarType::I32, {1}, {24})});        // scale 0.5 * 2^24 / 2^27 = 1/16
  // sigmoid(x / 16) * 256 - 128: -127.5 (x = -100: -6.25), -59.1, -4.0, 0, 4.0, 59.1, 127.5; 127 is
  // beyond the input radius floor(15 * 2^27 / 2^24) = 120 and saturates.
  EXPECT_EQ(out[0].i, (std::vector<int64_t>{-128, -59, -4, 0, 4, 59, 127, 127}));
}

TEST(ReferenceValues, NnAdaptiveAvgPoolOverlappingWindows) {
  auto b = bind("nn.adaptive_avgpool", "N = 1, H = 5, W = 1, C = 1, OH = 3, OW = 1, T = f32");
  ASSERT_TRUE(b);
  // Rows [floor(i * 5 / 3), ceil((i + 1) * 5 / 3)): [0, 2), [1, 4), [3, 5).
  auto out = run_reference(b->inst, {floats(ScalarType::F32, {1, 5, 1, 1}, {1, 2, 3, 4, 5})});
  expect_near_all(out[0], {1.5, 3, 4.5});
}

}  // namespace
}  // namespace ekb::ir
