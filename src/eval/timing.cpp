#include "eval/timing.h"

#include <algorithm>
#include <chrono>
#include <cmath>

#include "eval/poison.h"

namespace ekb::eval {

namespace {

double quantile(const std::vector<double>& sorted, double q) {
  if (sorted.empty()) return 0;
  double pos = q * static_cast<double>(sorted.size() - 1);
  size_t lo = static_cast<size_t>(pos);
  size_t hi = std::min(lo + 1, sorted.size() - 1);
  double f = pos - static_cast<double>(lo);
  return sorted[lo] * (1 - f) + sorted[hi] * f;
}

// A timed call that fails its output check did not reproduce its own verified answer.
ErrorKind timed_error(ErrorKind e) {
  return e == ErrorKind::Mismatch || e == ErrorKind::UnwrittenOutput ? ErrorKind::Nondeterministic : e;
}

}  // namespace

// sigma ~ IQR / 1.349 and the median's standard error is 1.2533 sigma / sqrt(n) for a normal sample.
double median_relative_error(std::vector<double> ms) {
  if (ms.size() < 2) return 1;
  std::sort(ms.begin(), ms.end());
  const double median = quantile(ms, 0.5);
  if (median <= 0) return 1;
  const double iqr = quantile(ms, 0.75) - quantile(ms, 0.25);
  return 1.2533 * (iqr / 1.349) / std::sqrt(static_cast<double>(ms.size())) / median;
}

TimeStats summarize_times(std::vector<double> ms) {
  std::sort(ms.begin(), ms.end());
  TimeStats s;
  s.runs = static_cast<int>(ms.size());
  s.median_ms = quantile(ms, 0.5);
  s.p25_ms = quantile(ms, 0.25);
  s.p75_ms = quantile(ms, 0.75);
  return s;
}

TimingOutcome time_interleaved(KernelSession& session, int baseline_slot, int candidate_slot,
                               const std::vector<const Trial*>& input_sets, const TimingOptions& options) {
  TimingOutcome out;
  using Clock = std::chrono::steady_clock;
  const auto t0 = Clock::now();
  const int slots[2] = {baseline_slot, candidate_slot};
  std::vector<double> samples[2];
  double total_ms[2] = {0, 0};

  auto fail = [&](int which, const CallResult& r, const std::string& when) {
    out.error = timed_error(r.error);
    out.baseline_failed = which == 0;
    out.message = when + ": " + r.message;
    return out;
  };

  double last_ms[2] = {0, 0};  // the latest duration of each: how many calls of the faster fit
  // Each kernel walks through the input sets on its own, one set per call, so that no two
  // consecutive calls of a kernel see the same inputs: a kernel that compares a few input values
  // with its previous call's and replays its previous answer then never gets to replay, also when
  // it is the faster one called many times in a round. With one call each per round, both kernels
  // of a round see the same set (written into the arena once per round).
  int calls_made[2] = {0, 0};
  auto next_set = [&](int which) -> const Trial& {
    return *input_sets[static_cast<size_t>(calls_made[which]++) % input_sets.size()];
  };
  for (int which = 0; which < 2; ++which) {
    for (int w = 0; w < options.warmup_runs; ++w) {
      CallSpec spec;
      spec.poison_pattern = w % kPoisonPatterns;
      spec.flush = options.flush;
      spec.scrub_bytes = options.scrub_bytes;
      CallResult r = session.call(slots[which], next_set(which), spec);
      if (!r.ok()) return fail(which, r, "warm-up run " + std::to_string(w + 1));
      last_ms[which] = r.ms;
    }
  }

  for (int round = 0;; ++round) {
    // When one kernel is much faster (a 30 ms candidate against a 7 s baseline), it runs several
    // times per round, as many as fit in the slower one's duration: otherwise the time budget ends
    // the measurement after a handful of rounds and the fast kernel's median rests on 3 samples.
    int calls[2] = {1, 1};
    // (Only above a millisecond: shorter pairs reach their minimum time in a few rounds anyway.)
    if (last_ms[0] > 0 && last_ms[1] > 0 && std::max(last_ms[0], last_ms[1]) >= 1.0) {
      const int fast = last_ms[0] < last_ms[1] ? 0 : 1;
      calls[fast] = static_cast<int>(std::clamp(std::floor(last_ms[1 - fast] / last_ms[fast]), 1.0,
                                                static_cast<double>(options.max_calls_per_round)));
    }
    for (int k = 0; k < 2; ++k) {
      const int which = round % 2 == 0 ? k : 1 - k;  // alternate who goes first
      for (int c = 0; c < calls[which]; ++c) {
        CallSpec spec;
        spec.poison_pattern = (round + c) % kPoisonPatterns;
        spec.flush = options.flush;
        spec.scrub_bytes = options.scrub_bytes;
        spec.remember_outputs = true;  // a verified answer makes the next call's check a memcmp
        const Trial& set = next_set(which);
        CallResult r = session.call(slots[which], set, spec);
        if (!r.ok()) return fail(which, r, "timed run " + std::to_string(round + 1) + " on " + set.label);
        samples[which].push_back(r.ms);
        total_ms[which] += r.ms;
        last_ms[which] = r.ms;
      }
    }
    const int runs = static_cast<int>(std::min(samples[0].size(), samples[1].size()));
    const double elapsed = std::chrono::duration<double>(Clock::now() - t0).count();
    const bool enough_time = std::max(total_ms[0], total_ms[1]) >= options.min_time_s * 1e3;
    if (runs >= options.max_runs) break;
    if (runs >= options.min_runs && enough_time &&
        median_relative_error(samples[0]) <= options.target_precision &&
        median_relative_error(samples[1]) <= options.target_precision)
      break;
    // The budget ends the rounds once both have their minimum runs; past twice the budget, at 3
    // (a 8 s baseline would otherwise stop after 3 runs, and its median then moved the speedup of
    // one candidate by 5.5% between evaluations).
    if (elapsed >= options.max_time_s && runs >= options.min_runs) break;
    if (elapsed >= 2 * options.max_time_s && runs >= std::min(options.min_runs, 3)) break;
  }
  out.baseline = summarize_times(std::move(samples[0]));
  out.candidate = summarize_times(std::move(samples[1]));
  return out;
}

}  // namespace ekb::eval
