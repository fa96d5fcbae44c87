// The timing protocol (docs/EVALUATION.md §5): baseline and candidate measured interleaved, in the same worker,
// so that drift of the machine (frequency, other load) hits both alike.
//
//  - warm-up: `warmup_runs` calls of each, not recorded;
//  - rounds: each round calls both (the order alternating between rounds): the slower once, the
//    faster as many times as fit in the slower's duration (up to `max_calls_per_round`), so a fast
//    candidate of a slow baseline still gets a precise median; rounds continue until both have
//    `min_runs` runs, either has accumulated `min_time_s` of measured time, both medians are
//    known to `target_precision` (their estimated relative standard error, from the interquartile
//    range: a noisy kernel gets more runs, a steady long one fewer) and so is the speedup
//    (`speedup_precision`: the 95% interval of the median of the rounds' paired ratios, so that a
//    parallel kernel disturbed now and then by other work runs until its ratio is known), or
//    until `max_runs`, or the `max_time_s` budget;
//  - every call gets inputs that no earlier call saw (eval/fresh_inputs.h), so no kernel can gain
//    speed by recognising its inputs; in each round one call of each kernel, at a position drawn at
//    random, runs on one shared set, and the candidate's outputs there are compared with the
//    baseline's (the baseline itself was checked against the reference): a kernel that replays,
//    memoizes or skips work once it is timed fails with Nondeterministic;
//  - each call starts cold unless `flush` is off (workloads tagged `warm`), evicted outside the
//    measured interval;
//  - median and interquartile range of the per-call durations; the speedup is the median of the
//    per-round ratios baseline / candidate, with its 95% interval.
#pragma once
#include <string>
#include <vector>

#include "eval/fresh_inputs.h"
#include "eval/kernel_session.h"
#include "eval/result.h"

namespace ekb::eval {

struct TimingOptions {
  double min_time_s = 0.1;
  int min_runs = 5;
  int max_runs = 500;
  double target_precision = 0.01;  // relative standard error of each median
  // Half-width of the speedup's 95% interval, relative to it. 2%: a standard error of about 1%, as
  // asked of each median; 1% took 3-10 times the rounds of memory-bound kernels of a millisecond.
  double speedup_precision = 0.02;
  int max_calls_per_round = 32;     // of the faster kernel, when the other is much slower
  int warmup_runs = 1;  // the correctness trials just before have warmed both kernels already
  double max_time_s = 30;  // wall-clock budget of the timing phase once both have min_runs (hard stop: twice it)
  bool flush = true;
  size_t scrub_bytes = 0;
};

// An estimate with a (95%) confidence interval.
struct ConfidenceInterval {
  double estimate = 0, low = 0, high = 0;
};

struct TimingOutcome {
  ErrorKind error = ErrorKind::None;
  std::string message;
  bool baseline_failed = false;  // the error is the baseline's (a harness problem)
  TimeStats baseline, candidate;
  ConfidenceInterval speedup;  // the median of the rounds' paired ratios (baseline / candidate)
  bool ok() const { return error == ErrorKind::None; }
};

// `fresh` derives the timed calls' inputs from trials both kernels passed (check_trials).
// A disagreement on the compared call is settled by the reference on those inputs: the candidate's
// fault (Nondeterministic) or the baseline's (baseline_failed).
TimingOutcome time_interleaved(KernelSession& session, const WorkloadReference& reference, int baseline_slot,
                               int candidate_slot, FreshInputs& fresh, const TimingOptions& options);

// The median of a sample with its distribution-free 95% confidence interval (order statistics).
ConfidenceInterval median_interval(std::vector<double> x);
// Half the interval's width relative to its estimate (1 when the estimate is not positive).
double relative_half_width(const ConfidenceInterval& ci);

// Median and quartiles (linear interpolation between order statistics) of durations in ms.
TimeStats summarize_times(std::vector<double> ms);

// The relative standard error of a sample's median, estimated robustly from its interquartile range
// (the stopping rule of time_interleaved; 1 for fewer than two samples).
double median_relative_error(std::vector<double> ms);

}  // namespace ekb::eval
