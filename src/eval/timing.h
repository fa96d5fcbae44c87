// The timing protocol (DESIGN §4): baseline and candidate measured interleaved, in the same worker,
// on the same inputs, so that drift of the machine (frequency, other load) hits both alike.
//
//  - warm-up: `warmup_runs` calls of each, not recorded;
//  - rounds: each round calls both (the order alternating between rounds): the slower once, the
//    faster as many times as fit in the slower's duration (up to `max_calls_per_round`), so a fast
//    candidate of a slow baseline still gets a precise median; each kernel takes the input sets in
//    turn, a new one on every call (no kernel sees the same inputs twice in a row); rounds continue until both have `min_runs` runs, either has
//    accumulated `min_time_s` of measured time and both medians are known to `target_precision`
//    (their estimated relative standard error, from the interquartile range: a noisy kernel gets
//    more runs, a steady long one fewer), or until `max_runs`, or the `max_time_s` budget;
//  - each call starts cold unless `flush` is off (workloads tagged `warm`), evicted outside the
//    measured interval;
//  - every call's outputs are checked (KernelSession::call) against that kernel's verified answer
//    for the same inputs: a kernel that notices it is being timed and skips or replays work fails
//    with Nondeterministic, and rotating input sets under the same pointers defeats replaying the
//    previous answer;
//  - median and interquartile range of the per-call durations.
#pragma once
#include <string>
#include <vector>

#include "eval/kernel_session.h"
#include "eval/result.h"

namespace ekb::eval {

struct TimingOptions {
  double min_time_s = 0.1;
  int min_runs = 5;
  int max_runs = 500;
  double target_precision = 0.01;  // relative standard error of each median
  int max_calls_per_round = 32;     // of the faster kernel, when the other is much slower
  int warmup_runs = 1;  // the correctness trials just before have warmed both kernels already
  double max_time_s = 30;  // wall-clock budget of the timing phase once both have min_runs (hard stop: twice it)
  bool flush = true;
  size_t scrub_bytes = 0;
};

struct TimingOutcome {
  ErrorKind error = ErrorKind::None;
  std::string message;
  bool baseline_failed = false;  // the error is the baseline's (a harness problem)
  TimeStats baseline, candidate;
  bool ok() const { return error == ErrorKind::None; }
};

// `input_sets` must have been checked for both slots first (check_trials), so that their verified
// answers exist.
TimingOutcome time_interleaved(KernelSession& session, int baseline_slot, int candidate_slot,
                               const std::vector<const Trial*>& input_sets, const TimingOptions& options);

// Median and quartiles (linear interpolation between order statistics) of durations in ms.
TimeStats summarize_times(std::vector<double> ms);

// The relative standard error of a sample's median, estimated robustly from its interquartile range
// (the stopping rule of time_interleaved; 1 for fewer than two samples).
double median_relative_error(std::vector<double> ms);

}  // namespace ekb::eval
