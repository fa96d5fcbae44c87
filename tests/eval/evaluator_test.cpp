// The evaluator end to end on honest kernels: results filled in as the results contract expects,
// the compile cache used, baseline-versus-itself speedups near 1.
#include "eval/evaluator.h"

#include <gtest/gtest.h>

#include "eval/edge_inputs.h"
#include "eval_test_util.h"

namespace ekb::eval {
namespace {

using ekb::testing::baseline_for;
using ekb::testing::fast_options;
using ekb::testing::test_backend;
using ekb::testing::TestWorkloads;

TEST(Evaluator, FillsEveryFieldOfACorrectResult) {
  WorkloadReference& ref = TestWorkloads::get().reference("linalg.gemm/small");
  runtime::Source base = baseline_for(ref);
  runtime::Source cand = runtime::Source::from_file(ekb::testing::adversarial_dir() + "/ok_gemm_ikj.c");
  CandidateResult r = evaluate(test_backend(), ref, cand, base, fast_options());
  EXPECT_EQ(r.error, ErrorKind::None) << r.message;
  EXPECT_EQ(r.task, "linalg.gemm");
  EXPECT_EQ(r.workload, "linalg.gemm/small");
  EXPECT_EQ(r.backend, "cpu");
  EXPECT_EQ(r.solution, cand.origin);
  EXPECT_TRUE(r.compiled);
  EXPECT_TRUE(r.correct);
  ASSERT_TRUE(r.time && r.baseline && r.speedup);
  // Both have their minimum runs; how many more each got depends on the machine (the faster of a
  // pair above a millisecond is called several times a round), so no equality of counts here.
  EXPECT_GE(r.time->runs, 5);
  EXPECT_GE(r.baseline->runs, 5);
  EXPECT_LE(r.time->p25_ms, r.time->median_ms);
  EXPECT_LE(r.time->median_ms, r.time->p75_ms);
  // The speedup is the median of the rounds' paired ratios, inside its own interval.
  EXPECT_GT(*r.speedup, 0);
  EXPECT_LE(r.speedup_low, *r.speedup);
  EXPECT_GE(r.speedup_high, *r.speedup);
  EXPECT_GE(r.cpu_steal, 0);  // /proc/stat is readable here
  ASSERT_TRUE(r.max_error_ratio);  // how close the pass came: inside the tolerance
  EXPECT_GT(*r.max_error_ratio, 0);
  EXPECT_LE(*r.max_error_ratio, 1);
  EXPECT_GT(r.max_abs_error, 0);  // a reassociated float sum is not bit-exact with the f64 reference
  EXPECT_GT(r.cost.check_s, 0);
  EXPECT_GT(r.cost.time_s, 0);

  CandidateResult again = evaluate(test_backend(), ref, cand, base, fast_options());
  EXPECT_TRUE(again.cost.compile_cached);
  EXPECT_TRUE(again.correct);
}

TEST(Evaluator, CheckOnlyModeSkipsTiming) {
  WorkloadReference& ref = TestWorkloads::get().reference("nn.relu6/mbv2_035_96_48x48x48");
  EvalOptions o = fast_options();
  o.time = false;
  CandidateResult r = evaluate(test_backend(), ref, baseline_for(ref), baseline_for(ref), o);
  EXPECT_TRUE(r.correct) << r.message;
  EXPECT_FALSE(r.time);
  EXPECT_FALSE(r.speedup);
}

TEST(Evaluator, TheBaselineAgainstItselfIsNearOne) {
  WorkloadReference& ref = TestWorkloads::get().reference("linalg.gemm/small");
  EvalOptions o = fast_options();
  o.timing.min_time_s = 0.1;
  o.timing.max_runs = 400;
  CandidateResult r = evaluate(test_backend(), ref, baseline_for(ref), baseline_for(ref), o);
  ASSERT_TRUE(r.correct) << r.message;
  EXPECT_NEAR(*r.speedup, 1.0, 0.25) << "baseline " << r.baseline->median_ms << " ms, candidate "
                                      << r.time->median_ms << " ms";
}

// The timed calls compare the candidate with the baseline; where they disagree, the reference on
// those inputs decides: here the baseline stops working once timed, and the harness says so
// instead of blaming the correct candidate.
TEST(Evaluator, ABaselineWrongOnlyWhileTimedIsAHarnessErrorNotTheCandidates) {
  WorkloadReference& ref = TestWorkloads::get().reference("nn.relu6/mbv2_035_96_48x48x48");
  const runtime::Source broken_baseline{runtime::Language::C, R"(
static int calls;
void ekb_main(const float* x, float* y, int64_t N, int64_t H, int64_t W, int64_t C) {
  const int working = ++calls <= 12;  /* the baseline's checks and the warm-up, then half the work */
  for (int64_t i = 0; i < N * H * W * C; ++i) y[i] = x[i] < 0 ? 0 : (x[i] > 6 || !working ? 6 : x[i]);
})", "baseline_wrong_when_timed.c"};
  runtime::Source cand = runtime::Source::from_file(ekb::testing::adversarial_dir() + "/ok_relu6_openmp.c");
  CandidateResult r = evaluate(test_backend(), ref, cand, broken_baseline, fast_options());
  EXPECT_EQ(r.error, ErrorKind::Internal) << r.message;
  EXPECT_NE(r.message.find("the baseline's outputs differ from the reference"), std::string::npos) << r.message;
}

TEST(Evaluator, ABaselineThatDoesNotCompileIsAHarnessError) {
  WorkloadReference& ref = TestWorkloads::get().reference("nn.relu6/mbv2_035_96_48x48x48");
  runtime::Source broken{runtime::Language::C, "not C", "broken_baseline.c"};
  CandidateResult r = evaluate(test_backend(), ref, baseline_for(ref), broken, fast_options());
  EXPECT_EQ(r.error, ErrorKind::Internal);
  EXPECT_NE(r.message.find("baseline"), std::string::npos);
}

TEST(EdgeInputs, PutHalfTheElementsOnTheDomainBounds) {
  WorkloadReference& ref = TestWorkloads::get().reference("nn.relu6/mbv2_035_96_48x48x48");
  bool changed = false;
  auto inputs = generate_edge_inputs(ref.instance(), 7, &changed);
  ASSERT_TRUE(changed);
  ASSERT_EQ(inputs.size(), 1u);
  int64_t lo = 0, hi = 0, n = inputs[0].num_elements();
  for (double v : inputs[0].f) {
    EXPECT_GE(v, -8.0);
    EXPECT_LE(v, 8.0);
    lo += v == -8.0;
    hi += v == 8.0;
  }
  EXPECT_NEAR(static_cast<double>(lo) / n, 0.25, 0.02);
  EXPECT_NEAR(static_cast<double>(hi) / n, 0.25, 0.02);
  const Trial* edge = ref.edge_trial();
  ASSERT_NE(edge, nullptr);
  EXPECT_EQ(edge->kind, "edge");
}

}  // namespace
}  // namespace ekb::eval
