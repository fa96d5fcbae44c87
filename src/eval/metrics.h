// The benchmark's scores over a set of CandidateResults (docs/METRICS.md; definitions and their relation
// to KernelBench in docs/METRICS.md): Correct@k, Fast@p, geometric-mean speedup.
//
// Every score is over *workloads*: a workload's results are its samples (all its candidates, of any
// solution id). A workload that was selected but has no result counts as failed in every
// denominator, so leaving out hard workloads cannot raise a score.
#pragma once
#include <array>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "eval/result.h"

namespace ekb::eval {

// Unbiased pass@k (Chen et al., 2021): the probability that k of n samples, c of them correct,
// drawn without replacement, include a correct one: 1 - C(n-c, k) / C(n, k). Computed as a running
// product, so it is exact for any n without huge binomials. Requires 0 <= c <= n and 1 <= k <= n;
// throws std::invalid_argument otherwise.
double pass_at_k(int n, int c, int k);

// The speedup thresholds p of Fast@p, and their JSON keys ("0.0", "0.5", ...).
inline constexpr std::array<double, 6> kFastThresholds = {0.0, 0.5, 0.8, 1.0, 1.5, 2.0};
std::string threshold_key(double p);
// The k of Correct@k reported when every attempted workload has at least k samples.
inline constexpr std::array<int, 3> kCorrectAtK = {1, 5, 10};

// Correct and strictly faster than p times the baseline: speedup exactly p does not count.
bool is_fast(const CandidateResult& r, double p);

// One workload's samples.
struct WorkloadSamples {
  std::string workload;
  std::vector<const CandidateResult*> samples;

  int n() const { return static_cast<int>(samples.size()); }
  int correct() const;
  int fast(double p) const;
};

// Groups `results` by workload. Every name in `selected` gets a group, results or not; workloads
// only seen in `results` are added after them, in order of first appearance. The pointers point
// into `results`, which must outlive the groups.
std::vector<WorkloadSamples> group_by_workload(const std::vector<CandidateResult>& results,
                                               const std::vector<std::string>& selected = {});

// Mean over workloads of pass_at_k(n, correct, k). nullopt when some attempted workload has fewer
// than k samples (the estimator is undefined there) or there are no workloads; a workload with no
// sample scores 0.
std::optional<double> correct_at_k(const std::vector<WorkloadSamples>& groups, int k);

// Fast_p@k: pass_at_k with "fast" (is_fast(r, p)) in place of "correct", averaged over workloads.
// k = 1 is the headline Fast@p: the expected fraction of workloads a single sample solves faster
// than p; with one sample per workload it is exactly KernelBench's fast_p.
std::optional<double> fast_at_k(const std::vector<WorkloadSamples>& groups, double p, int k);
// Fraction of workloads with at least one fast sample (Fast_p@n with each workload's own n).
double fast_best_of_n(const std::vector<WorkloadSamples>& groups, double p);
// Fraction of workloads whose sample with index `sample` is fast (a missing one is not).
double fast_for_sample(const std::vector<WorkloadSamples>& groups, double p, int sample);
// Fraction of workloads whose sample with index `sample` is correct (a missing one is not).
double correct_for_sample(const std::vector<WorkloadSamples>& groups, int sample);

// Geometric mean of the speedups of correct samples: per workload the geometric mean over its
// correct samples, then the geometric mean over workloads that have one, so that a workload with
// many samples weighs as much as one with a single sample. nullopt when nothing is correct.
std::optional<double> geomean_speedup(const std::vector<WorkloadSamples>& groups);

// Median of the values; nullopt when empty.
std::optional<double> median(std::vector<double> values);

// The scores of one sample index alone, over all workloads: how a single generation at that index
// did (sample 0 of a one-shot run is KernelBench's setting).
struct SampleScores {
  double correct = 0;                // correct_for_sample
  std::map<double, double> fast_at;  // p -> fast_for_sample
};

struct Summary {
  int workloads = 0;  // the denominator of Correct@k and Fast@p
  int n = 0;          // results: evaluated candidates
  int compiled = 0;
  int correct = 0;
  int min_samples = 0;  // over workloads with at least one result
  int max_samples = 0;
  std::map<int, double> correct_at_k;          // 1 always; 5, 10 when min_samples >= k
  std::map<double, double> fast_at;            // p -> Fast_p@1
  std::map<double, double> fast_at_best_of_n;  // p -> fast_best_of_n
  std::optional<double> geomean_speedup;
  std::optional<double> median_roofline_fraction;  // filled by the caller, which knows the device
  std::map<int, SampleScores> by_sample;           // every sample index some workload has
  // The budget ledger summed over the results that carry one (`ledgered` of them).
  Ledger ledger;
  int ledgered = 0;
};

Summary summarize(const std::vector<WorkloadSamples>& groups);

}  // namespace ekb::eval
