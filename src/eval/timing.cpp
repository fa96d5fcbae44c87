#include "eval/timing.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <random>

#include "eval/output_check.h"
#include "eval/poison.h"
#include "ir/interpreter.h"

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

// A timed call whose outputs fail their check did work other than it did in the correctness trials.
ErrorKind timed_error(ErrorKind e) {
  return e == ErrorKind::Mismatch || e == ErrorKind::UnwrittenOutput ? ErrorKind::Nondeterministic : e;
}

// The candidate's outputs against the baseline's on the same inputs (no reference exists for
// them). Both lie within the tolerance of the exact answer, so they may differ by twice it.
// Outputs are given as pointers to each output's bytes: one kernel's copied after its call, the
// other's read in place in the arena right after its own.
CallResult agree_with_baseline(const KernelInterface& k, const std::vector<const uint8_t*>& candidate,
                               const std::vector<const uint8_t*>& baseline, int candidate_poison) {
  CallResult r;
  for (size_t o = 0; o < k.outputs.size() && r.ok(); ++o) {
    const ir::TensorInstance& t = *k.outputs[o];
    const size_t bytes = static_cast<size_t>(t.num_bytes());
    if (std::memcmp(candidate[o], baseline[o], bytes) == 0) continue;
    const ir::TensorData expected = ir::from_bytes(t.type, t.shape, baseline[o], bytes);
    OutputVerdict v = check_output(t.decl->name, candidate[o], expected, finite_rms(expected),
                                   candidate_poison, 2.0);
    r.error = v.error;
    r.message = v.message;
  }
  return r;
}

// Whether the candidate's outputs on `inputs` are within tolerance of the reference (computed
// here: only when it disagreed with the baseline).
bool reference_agrees(const WorkloadReference& reference, const InputBuffers& inputs,
                      const InputBuffers& candidate, int candidate_poison) {
  const KernelInterface& k = reference.interface();
  std::vector<ir::TensorData> decoded;
  for (size_t i = 0; i < k.inputs.size(); ++i)
    decoded.push_back(ir::from_bytes(k.inputs[i]->type, k.inputs[i]->shape, inputs[i].data(), inputs[i].size()));
  std::vector<ir::TensorData> expected;
  try {
    expected = ir::run_reference(reference.instance(), decoded);
  } catch (const std::exception&) {
    return false;
  }
  for (size_t o = 0; o < k.outputs.size(); ++o)
    if (check_output(k.outputs[o]->decl->name, candidate[o].data(), expected[o], finite_rms(expected[o]),
                     candidate_poison).error != ErrorKind::None)
      return false;
  return true;
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

// Ranks n/2 -+ 0.98 sqrt(n) of the sorted sample (1-based) bound its median with about 95%
// confidence whatever the distribution (the binomial's normal approximation); below 6 values the
// interval is the whole sample.
ConfidenceInterval median_interval(std::vector<double> x) {
  ConfidenceInterval ci;
  if (x.empty()) return ci;
  std::sort(x.begin(), x.end());
  const double n = static_cast<double>(x.size());
  ci.estimate = quantile(x, 0.5);
  ci.low = x.front();
  ci.high = x.back();
  if (x.size() >= 6) {
    const double half = 0.98 * std::sqrt(n);
    ci.low = x[static_cast<size_t>(std::max(0.0, std::floor(n / 2 - half) - 1))];
    ci.high = x[static_cast<size_t>(std::min(n - 1, std::ceil(n / 2 + half) - 1))];
  }
  return ci;
}

double relative_half_width(const ConfidenceInterval& ci) {
  return ci.estimate > 0 ? (ci.high - ci.low) / 2 / ci.estimate : 1;
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

TimingOutcome time_interleaved(KernelSession& session, const WorkloadReference& reference, int baseline_slot,
                               int candidate_slot, FreshInputs& fresh, const TimingOptions& options) {
  const KernelInterface& k = reference.interface();
  TimingOutcome out;
  using Clock = std::chrono::steady_clock;
  const auto t0 = Clock::now();
  const int slots[2] = {baseline_slot, candidate_slot};
  std::vector<double> samples[2];
  double total_ms[2] = {0, 0};
  // Per round, the baseline's time over the candidate's (medians of their calls in the round):
  // paired, so that a slow spell of the machine that hits both alike cancels out.
  std::vector<double> round_ratios;

  auto fail = [&](int which, ErrorKind kind, const std::string& message) {
    out.error = timed_error(kind);
    out.baseline_failed = which == 0;
    out.message = message;
    return out;
  };
  std::mt19937_64 positions(std::random_device{}());  // which call of a round is compared
  InputBuffers own_set, shared_set, outputs[2];
  // The round's shared set is derived into the arena at its first compared call (like every other
  // call's set) and copied back from shared_set for the second only when another set came between.
  FreshInputs::Draw shared_draw;
  bool shared_derived = false;
  // Whether the arena still holds the round's shared set: with one call each per round (most pairs)
  // both kernels' compared calls follow each other, and the set is written once. A kernel that
  // changed it has already failed the input check.
  bool shared_in_arena = false;
  auto call = [&](int which, int pattern, bool on_shared, InputBuffers* copies) {
    if (!on_shared) {
      session.write_fresh_inputs(fresh, fresh.draw(), own_set);
    } else if (!shared_derived) {
      session.write_fresh_inputs(fresh, shared_draw, shared_set);
      shared_derived = true;
    } else if (!shared_in_arena) {
      session.write_inputs(shared_set);
    }
    shared_in_arena = on_shared;
    CallSpec spec;
    spec.poison_pattern = pattern;
    spec.flush = options.flush;
    spec.scrub_bytes = options.scrub_bytes;
    return session.call_on(slots[which], spec, copies);
  };

  double last_ms[2] = {0, 0};  // the latest duration of each: how many calls of the faster fit
  for (int which = 0; which < 2; ++which) {
    for (int w = 0; w < options.warmup_runs; ++w) {
      CallResult r = call(which, w % kPoisonPatterns, false, nullptr);
      if (!r.ok()) return fail(which, r.error, "warm-up run " + std::to_string(w + 1) + ": " + r.message);
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
    // Every call gets a set of its own, except one call of each kernel per round, on one shared
    // set, whose outputs are compared; the kernel cannot tell which of its calls that is.
    shared_draw = fresh.draw();
    shared_derived = false;
    shared_in_arena = false;
    int shared_call[2];
    int shared_pattern[2] = {0, 0};
    for (int which = 0; which < 2; ++which)
      shared_call[which] = static_cast<int>(positions() % static_cast<uint64_t>(calls[which]));
    std::vector<double> round_ms[2];
    CallResult agreed;
    for (int j = 0; j < 2; ++j) {
      const int which = round % 2 == 0 ? j : 1 - j;  // alternate who goes first
      for (int c = 0; c < calls[which]; ++c) {
        const int pattern = (round + c) % kPoisonPatterns;
        const bool shared = c == shared_call[which];
        if (shared) shared_pattern[which] = pattern;
        // The first kernel's compared outputs are copied; the second's are compared where they lie,
        // before its next call overwrites them (a copy of each output per round saved).
        const bool copy_outputs = shared && j == 0;
        CallResult r = call(which, pattern, shared, copy_outputs ? &outputs[which] : nullptr);
        if (!r.ok()) return fail(which, r.error, "timed run " + std::to_string(round + 1) + ": " + r.message);
        samples[which].push_back(r.ms);
        round_ms[which].push_back(r.ms);
        total_ms[which] += r.ms;
        last_ms[which] = r.ms;
        if (shared && j == 1) {
          std::vector<const uint8_t*> here(k.outputs.size()), copied(k.outputs.size());
          for (size_t o = 0; o < k.outputs.size(); ++o) {
            here[o] = session.output_in_arena(o);
            copied[o] = outputs[1 - which][o].data();
          }
          agreed = which == 1 ? agree_with_baseline(k, here, copied, shared_pattern[1])
                              : agree_with_baseline(k, copied, here, shared_pattern[1]);
          // The candidate's outputs stay at hand for the reference's verdict below.
          if (!agreed.ok() && which == 1) {
            outputs[1].resize(k.outputs.size());
            for (size_t o = 0; o < k.outputs.size(); ++o)
              outputs[1][o].assign(here[o], here[o] + k.outputs[o]->num_bytes());
          }
        }
      }
    }
    if (!agreed.ok()) {
      // Rare (a cheat, or a baseline wrong where the trials did not look): the reference, slow but
      // exact, says whose fault the disagreement is.
      const std::string where = "timed run " + std::to_string(round + 1) + " on inputs no earlier call saw";
      if (reference_agrees(reference, shared_set, outputs[1], shared_pattern[1]))
        return fail(0, ErrorKind::Internal, where + ": the baseline's outputs differ from the reference there");
      return fail(1, agreed.error, where + ", compared with the baseline's outputs on the same inputs: " +
                                       agreed.message);
    }
    const double round_candidate = summarize_times(round_ms[1]).median_ms;
    if (round_candidate > 0) round_ratios.push_back(summarize_times(round_ms[0]).median_ms / round_candidate);
    const int runs = static_cast<int>(std::min(samples[0].size(), samples[1].size()));
    const double elapsed = std::chrono::duration<double>(Clock::now() - t0).count();
    const bool enough_time = std::max(total_ms[0], total_ms[1]) >= options.min_time_s * 1e3;
    if (runs >= options.max_runs) break;
    if (runs >= options.min_runs && enough_time &&
        median_relative_error(samples[0]) <= options.target_precision &&
        median_relative_error(samples[1]) <= options.target_precision &&
        relative_half_width(median_interval(round_ratios)) <= options.speedup_precision)
      break;
    // The budget ends the rounds once both have their minimum runs; past twice the budget, at 3
    // (a 8 s baseline would otherwise stop after 3 runs, and its median then moved the speedup of
    // one candidate by 5.5% between evaluations).
    if (elapsed >= options.max_time_s && runs >= options.min_runs) break;
    if (elapsed >= 2 * options.max_time_s && runs >= std::min(options.min_runs, 3)) break;
  }
  out.baseline = summarize_times(std::move(samples[0]));
  out.candidate = summarize_times(std::move(samples[1]));
  out.speedup = median_interval(std::move(round_ratios));
  return out;
}

}  // namespace ekb::eval
