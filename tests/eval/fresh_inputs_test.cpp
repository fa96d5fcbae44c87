// The timing loop's inputs (eval/fresh_inputs.h): every set new, inside the declared domains, and
// distributed like the trials; and the speedup's confidence interval (eval/timing.h).
#include "eval/fresh_inputs.h"

#include <gtest/gtest.h>

#include <cstring>

#include "eval/timing.h"
#include "eval_test_util.h"
#include "ir/tensor_data.h"

namespace ekb::eval {
namespace {

using ekb::testing::TestWorkloads;

std::vector<const Trial*> trials(WorkloadReference& ref, int n) {
  std::vector<const Trial*> out;
  for (int k = 0; k < n; ++k) out.push_back(&ref.random_trial(k));
  return out;
}

// Every element of every input changes from set to set, and no set equals a trial's.
TEST(FreshInputs, EverySetDiffersFromTheTrialsAndFromEveryEarlierSetInEveryElement) {
  WorkloadReference& ref = TestWorkloads::get().reference("linalg.gemm/small");
  const auto bases = trials(ref, 3);
  FreshInputs fresh(ref, bases);
  std::vector<InputBuffers> seen;
  for (const Trial* t : bases) seen.push_back(t->inputs);
  for (int call = 0; call < 20; ++call) {
    InputBuffers set;
    fresh.next(set);
    ASSERT_EQ(set.size(), bases[0]->inputs.size());
    for (const InputBuffers& earlier : seen)
      for (size_t i = 0; i < set.size(); ++i) {
        ASSERT_EQ(set[i].size(), earlier[i].size());
        const size_t n = set[i].size() / sizeof(float);
        size_t same = 0;
        for (size_t k = 0; k < n; ++k)
          same += std::memcmp(&set[i][k * 4], &earlier[i][k * 4], 4) == 0;
        EXPECT_LT(same, n / 100 + 2) << "input " << i << " of set " << call;  // chance coincidences only
      }
    seen.push_back(set);
  }
}

// A draw written twice gives the same bytes, into the arena-style pointers and the copy alike (the
// timing loop writes the round's compared set once for each kernel), and two draws differ.
TEST(FreshInputs, ADrawWrittenAgainGivesTheSameSetAndItsCopy) {
  for (const char* name : {"linalg.gemm/small", "linalg.cholesky/small", "qnn.conv2d/ic_resnet8_32x32x16"}) {
    SCOPED_TRACE(name);
    WorkloadReference& ref = TestWorkloads::get().reference(name);
    FreshInputs fresh(ref, trials(ref, 3));
    const FreshInputs::Draw d = fresh.draw();
    InputBuffers once, twice, copy, other;
    fresh.write(d, once);
    fresh.draw();  // draws in between change nothing of d's set
    std::vector<uint8_t*> dest;
    twice = once;
    for (auto& b : twice) {
      std::fill(b.begin(), b.end(), uint8_t{0xA5});
      dest.push_back(b.data());
    }
    fresh.write(d, dest, &copy);
    EXPECT_EQ(twice, once);
    EXPECT_EQ(copy, once);
    fresh.write(fresh.draw(), other);
    EXPECT_NE(other, once);
  }
}

// Values stay inside each input's declared range (an int8 zero point, a [-8, 8] float, spd), for
// every element type an input of the suite has (f32, f16, f64, i8, u8, i16, i32, i64), and two
// consecutive sets differ in about every element where the range is wide.
TEST(FreshInputs, ValuesStayInsideTheDeclaredDomainsAndSpdStaysPositiveDefinite) {
  for (const char* name : {"nn.softmax/mbert_128x512", "qnn.conv2d/ic_resnet8_32x32x16", "linalg.cholesky/small",
                           "linalg.dot/n256_f16", "audio.lpc/opus_plc_1024_p24_f64", "audio.fir_q15/cmsis_block_32x28",
                           "qnn.softmax_s8/kws_1x12", "qnn.fc_s16/kws_64x12", "img.histogram/vww_96x96"}) {
    SCOPED_TRACE(name);
    WorkloadReference* ref = &TestWorkloads::get().reference(name);
    const KernelInterface& k = ref->interface();
    FreshInputs fresh(*ref, trials(*ref, 2));
    InputBuffers previous;
    for (int call = 0; call < 5; ++call) {
      InputBuffers set;
      fresh.next(set);
      for (size_t i = 0; i < set.size(); ++i) {
        const ir::TensorInstance& t = *k.inputs[i];
        const ir::TensorData d = ir::from_bytes(t.type, t.shape, set[i].data(), set[i].size());
        if (t.decl->domain.kind == ir::DomainKind::Spd) {
          const int64_t n = t.shape.back();
          for (int64_t r = 0; r < n; ++r) {  // symmetric, diagonally heavier than any entry
            for (int64_t c = 0; c < n; ++c) EXPECT_EQ(d.f[r * n + c], d.f[c * n + r]);
            EXPECT_GT(d.f[r * n + r], 1.0);
          }
          continue;
        }
        const ir::ValueRange range = ir::input_value_range(ref->instance(), t);
        const bool wide = range.is_float ? range.fhi > range.flo : range.ihi - range.ilo >= 255;
        if (call > 0 && wide) {
          const ir::TensorData p = ir::from_bytes(t.type, t.shape, previous[i].data(), previous[i].size());
          int64_t same = 0;
          for (int64_t e = 0; e < d.num_elements(); ++e) same += d.as_double(e) == p.as_double(e);
          EXPECT_LE(same, d.num_elements() / 50 + 2) << t.decl->name << " barely changed";
        }
        for (int64_t e = 0; e < d.num_elements(); ++e) {
          if (range.is_float) {
            ASSERT_GE(d.f[e], range.flo) << t.decl->name;
            ASSERT_LE(d.f[e], range.fhi) << t.decl->name;
          } else {
            ASSERT_GE(d.i[e], range.ilo) << t.decl->name;
            ASSERT_LE(d.i[e], range.ihi) << t.decl->name;
          }
        }
      }
      previous = set;
    }
  }
}

// Uniform inputs stay uniform: the mean and spread of [-8, 8] softmax inputs match a uniform draw.
TEST(FreshInputs, UniformInputsStayUniform) {
  WorkloadReference& ref = TestWorkloads::get().reference("nn.softmax/mbert_128x512");
  FreshInputs fresh(ref, trials(ref, 2));
  InputBuffers set;
  fresh.next(set);
  const auto* x = reinterpret_cast<const float*>(set[0].data());
  const size_t n = set[0].size() / sizeof(float);
  double sum = 0, sq = 0;
  for (size_t k = 0; k < n; ++k) sum += x[k], sq += double(x[k]) * x[k];
  const double mean = sum / n, var = sq / n - mean * mean;
  EXPECT_NEAR(mean, 0.0, 0.1);
  EXPECT_NEAR(var, 256.0 / 12, 0.5);  // (hi - lo)^2 / 12
}

TEST(Timing, TheMedianIntervalHoldsTheMedianAndNarrowsWithMoreValues) {
  std::vector<double> few = {1.0, 1.1, 0.9, 1.05, 0.95, 1.2, 0.8, 1.0, 1.02, 0.98};
  ConfidenceInterval a = median_interval(few);
  EXPECT_LE(a.low, a.estimate);
  EXPECT_GE(a.high, a.estimate);
  std::vector<double> many;
  for (int r = 0; r < 40; ++r) many.insert(many.end(), few.begin(), few.end());
  ConfidenceInterval b = median_interval(many);
  EXPECT_DOUBLE_EQ(b.estimate, a.estimate);
  EXPECT_LT(relative_half_width(b), relative_half_width(a));
  EXPECT_EQ(relative_half_width(median_interval({})), 1);
  ConfidenceInterval tiny = median_interval({2.0, 1.0, 3.0});  // below 6 values: the whole sample
  EXPECT_EQ(tiny.low, 1.0);
  EXPECT_EQ(tiny.high, 3.0);
}

}  // namespace
}  // namespace ekb::eval
