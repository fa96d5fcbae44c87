// Correct@k, Fast@p and the geometric mean against hand-computed values (docs/METRICS.md).
#include "eval/metrics.h"

#include <gtest/gtest.h>

#include <cmath>

namespace ekb::eval {
namespace {

CandidateResult sample(const std::string& workload, int index, bool correct, std::optional<double> speedup = {}) {
  CandidateResult r;
  r.workload = workload;
  r.task = workload.substr(0, workload.find('/'));
  r.solution = "s.c";
  r.sample = index;
  r.compiled = true;
  r.correct = correct;
  r.error = correct ? ErrorKind::None : ErrorKind::Mismatch;
  r.speedup = speedup;
  return r;
}

// 1 - C(n-c, k) / C(n, k) through log-gamma: an independent check of the product form.
double pass_at_k_lgamma(int n, int c, int k) {
  if (n - c < k) return 1.0;
  auto log_choose = [](int a, int b) { return std::lgamma(a + 1.0) - std::lgamma(b + 1.0) - std::lgamma(a - b + 1.0); };
  return 1.0 - std::exp(log_choose(n - c, k) - log_choose(n, k));
}

TEST(PassAtK, HandComputedValues) {
  EXPECT_DOUBLE_EQ(pass_at_k(10, 3, 1), 0.3);
  EXPECT_NEAR(pass_at_k(10, 3, 5), 1.0 - 21.0 / 252.0, 1e-15);  // C(7,5)=21, C(10,5)=252
  EXPECT_NEAR(pass_at_k(10, 3, 2), 1.0 - 21.0 / 45.0, 1e-15);   // C(7,2)=21, C(10,2)=45
  EXPECT_DOUBLE_EQ(pass_at_k(10, 3, 8), 1.0);                   // only 7 wrong: any 8 include a correct one
  EXPECT_DOUBLE_EQ(pass_at_k(10, 3, 10), 1.0);
  EXPECT_NEAR(pass_at_k(5, 2, 2), 0.7, 1e-15);                  // 1 - C(3,2)/C(5,2) = 1 - 3/10
  EXPECT_DOUBLE_EQ(pass_at_k(10, 0, 5), 0.0);
  EXPECT_DOUBLE_EQ(pass_at_k(10, 10, 1), 1.0);
  EXPECT_DOUBLE_EQ(pass_at_k(1, 1, 1), 1.0);
  EXPECT_DOUBLE_EQ(pass_at_k(1, 0, 1), 0.0);
}

TEST(PassAtK, StableForLargeN) {
  // C(1000, 500) overflows a double; the product form does not need it.
  for (auto [n, c, k] : {std::tuple{1000, 17, 500}, {200, 50, 100}, {1000, 1, 10}, {5000, 3, 1}}) {
    double v = pass_at_k(n, c, k);
    EXPECT_TRUE(std::isfinite(v));
    EXPECT_NEAR(v, pass_at_k_lgamma(n, c, k), 1e-9) << n << " " << c << " " << k;
  }
  EXPECT_NEAR(pass_at_k(5000, 3, 1), 3.0 / 5000, 1e-15);
}

TEST(PassAtK, RejectsImpossibleArguments) {
  EXPECT_THROW(pass_at_k(10, 11, 1), std::invalid_argument);
  EXPECT_THROW(pass_at_k(10, 3, 0), std::invalid_argument);
  EXPECT_THROW(pass_at_k(10, 3, 11), std::invalid_argument);
  EXPECT_THROW(pass_at_k(-1, 0, 1), std::invalid_argument);
}

TEST(FastAtP, DenominatorCountsEveryWorkloadAndThresholdIsStrict) {
  std::vector<CandidateResult> rs = {
      sample("a/1", 0, true, 2.0),    // fast for p < 2 only: exactly 2.0 is not > 2.0
      sample("b/1", 0, true, 1.0),    // exactly the baseline: fast for p < 1 only
      sample("c/1", 0, false, 3.0),   // a speedup, but incorrect: never fast
      sample("d/1", 0, true, 0.4),    // correct but slow
  };
  // e/1 was selected but produced no result: it still counts in the denominator.
  auto groups = group_by_workload(rs, {"a/1", "b/1", "c/1", "d/1", "e/1"});
  ASSERT_EQ(groups.size(), 5u);
  EXPECT_DOUBLE_EQ(*fast_at_k(groups, 0.0, 1), 3.0 / 5);
  EXPECT_DOUBLE_EQ(*fast_at_k(groups, 0.5, 1), 2.0 / 5);
  EXPECT_DOUBLE_EQ(*fast_at_k(groups, 0.8, 1), 2.0 / 5);
  EXPECT_DOUBLE_EQ(*fast_at_k(groups, 1.0, 1), 1.0 / 5);
  EXPECT_DOUBLE_EQ(*fast_at_k(groups, 1.5, 1), 1.0 / 5);
  EXPECT_DOUBLE_EQ(*fast_at_k(groups, 2.0, 1), 0.0);
  EXPECT_DOUBLE_EQ(*correct_at_k(groups, 1), 3.0 / 5);

  EXPECT_FALSE(is_fast(sample("x/1", 0, true, 1.0), 1.0));
  EXPECT_TRUE(is_fast(sample("x/1", 0, true, 1.0000001), 1.0));
  EXPECT_FALSE(is_fast(sample("x/1", 0, true), 0.0));  // correct but never timed: no speedup
}

TEST(FastAtP, SeveralSamplesPerWorkload) {
  std::vector<CandidateResult> rs = {
      sample("a/1", 0, true, 1.2), sample("a/1", 1, true, 0.9), sample("a/1", 2, false), sample("a/1", 3, true, 2.5),
      sample("b/1", 0, false),     sample("b/1", 1, true, 0.5), sample("b/1", 2, false), sample("b/1", 3, false),
  };
  auto groups = group_by_workload(rs);
  // Fast_1.0@1: a has 2 of 4 fast, b 0 of 4 -> (0.5 + 0) / 2.
  EXPECT_DOUBLE_EQ(*fast_at_k(groups, 1.0, 1), 0.25);
  // Fast_1.0@2 for a: 1 - C(2,2)/C(4,2) = 5/6; b: 0.
  EXPECT_NEAR(*fast_at_k(groups, 1.0, 2), (5.0 / 6) / 2, 1e-15);
  EXPECT_FALSE(fast_at_k(groups, 1.0, 5).has_value());  // 4 samples cannot estimate @5
  EXPECT_DOUBLE_EQ(fast_best_of_n(groups, 1.0), 0.5);
  EXPECT_DOUBLE_EQ(fast_best_of_n(groups, 2.0), 0.5);
  EXPECT_DOUBLE_EQ(fast_best_of_n(groups, 2.5), 0.0);
  EXPECT_DOUBLE_EQ(fast_for_sample(groups, 1.0, 0), 0.5);
  EXPECT_DOUBLE_EQ(fast_for_sample(groups, 1.0, 1), 0.0);
  EXPECT_DOUBLE_EQ(fast_for_sample(groups, 1.0, 7), 0.0);  // nobody has a sample 7
  // Correct@1: a 3/4, b 1/4.
  EXPECT_DOUBLE_EQ(*correct_at_k(groups, 1), 0.5);
  EXPECT_DOUBLE_EQ(*correct_at_k(groups, 4), 1.0);
}

TEST(GeomeanSpeedup, OverCorrectSolutionsEachWorkloadWeighedOnce) {
  {
    std::vector<CandidateResult> rs = {sample("a/1", 0, true, 2.0), sample("b/1", 0, true, 0.5),
                                       sample("c/1", 0, false, 100.0)};
    EXPECT_NEAR(*geomean_speedup(group_by_workload(rs)), 1.0, 1e-12);
  }
  {
    // a: samples 4 and 1 -> its own geomean 2; b: 2. Overall sqrt(2 * 2) = 2, not cbrt(4*1*2).
    std::vector<CandidateResult> rs = {sample("a/1", 0, true, 4.0), sample("a/1", 1, true, 1.0),
                                       sample("b/1", 0, true, 2.0)};
    EXPECT_NEAR(*geomean_speedup(group_by_workload(rs)), 2.0, 1e-12);
  }
  {
    std::vector<CandidateResult> rs = {sample("a/1", 0, false, 2.0), sample("b/1", 0, true)};
    EXPECT_FALSE(geomean_speedup(group_by_workload(rs)).has_value());
  }
  EXPECT_NEAR(*geomean_speedup(group_by_workload({sample("a/1", 0, true, 1.5), sample("b/1", 0, true, 3.0),
                                                   sample("c/1", 0, true, 6.0)})),
              3.0, 1e-12);  // cbrt(1.5 * 3 * 6) = cbrt(27)
}

TEST(Summary, CountsAndWhichCorrectAtKAreDefined) {
  std::vector<CandidateResult> rs;
  for (int i = 0; i < 5; ++i) rs.push_back(sample("a/1", i, i < 2, i < 2 ? std::optional(1.5) : std::nullopt));
  for (int i = 0; i < 5; ++i) rs.push_back(sample("b/1", i, false));
  rs.back().compiled = false;
  rs.back().error = ErrorKind::Compile;
  Summary s = summarize(group_by_workload(rs));
  EXPECT_EQ(s.workloads, 2);
  EXPECT_EQ(s.n, 10);
  EXPECT_EQ(s.compiled, 9);
  EXPECT_EQ(s.correct, 2);
  EXPECT_EQ(s.min_samples, 5);
  EXPECT_EQ(s.max_samples, 5);
  ASSERT_TRUE(s.correct_at_k.count(1) && s.correct_at_k.count(5));
  EXPECT_FALSE(s.correct_at_k.count(10));  // 5 samples per workload: @10 undefined
  EXPECT_DOUBLE_EQ(s.correct_at_k[1], (2.0 / 5) / 2);
  EXPECT_DOUBLE_EQ(s.correct_at_k[5], 0.5);
  EXPECT_EQ(s.fast_at.size(), kFastThresholds.size());
  EXPECT_DOUBLE_EQ(s.fast_at[1.0], 0.2);
  EXPECT_DOUBLE_EQ(s.fast_at[1.5], 0.0);
  EXPECT_DOUBLE_EQ(s.fast_at_best_of_n[1.0], 0.5);
  EXPECT_NEAR(*s.geomean_speedup, 1.5, 1e-12);

  Summary empty = summarize({});
  EXPECT_EQ(empty.n, 0);
  EXPECT_DOUBLE_EQ(empty.correct_at_k.at(1), 0.0);
  EXPECT_FALSE(empty.geomean_speedup.has_value());

  // Selected workloads without any result: everything is 0 and only Correct@1 is reported.
  Summary none = summarize(group_by_workload({}, {"a/1", "b/1"}));
  EXPECT_EQ(none.workloads, 2);
  EXPECT_EQ(none.correct_at_k.size(), 1u);
  EXPECT_DOUBLE_EQ(none.correct_at_k.at(1), 0.0);
  EXPECT_DOUBLE_EQ(none.fast_at.at(0.0), 0.0);
}

TEST(Metrics, ThresholdKeysAndMedian) {
  std::vector<std::string> keys;
  for (double p : kFastThresholds) keys.push_back(threshold_key(p));
  EXPECT_EQ(keys, (std::vector<std::string>{"0.0", "0.5", "0.8", "1.0", "1.5", "2.0"}));
  EXPECT_FALSE(median({}).has_value());
  EXPECT_DOUBLE_EQ(*median({3, 1, 2}), 2);
  EXPECT_DOUBLE_EQ(*median({4, 1, 3, 2}), 2.5);
}

}  // namespace
}  // namespace ekb::eval
