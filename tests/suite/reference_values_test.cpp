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

}  // namespace
}  // namespace ekb::ir
