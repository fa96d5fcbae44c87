// LEKA's loop (docs/AGENT.md, "The loop"): per workload, analyse it, evaluate the default lowering
// (step 0), then ask the policy for proposals one layer at a time and check each
//   verify (parse, check, lower: diagnostics with file:line:col) -> compile -> a quick correctness
//   trial -> interleaved timing against the baseline (a small timing budget)
// keeping it when it is correct and faster than the best, until the budget or the policy stops.
// The best candidate is re-evaluated with the full protocol and written as a solution
// (docs/SOLUTIONS.md) beside its trajectory.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "agent/policy.h"
#include "agent/trajectory.h"
#include "eval/evaluator.h"
#include "eval/reference_cache.h"
#include "ir/target.h"
#include "runtime/backend.h"
#include "runtime/calibration.h"
#include "suite/suite.h"

namespace ekb::agent {

// The evaluation of one step: one random trial (plus the edge and branch trials), no re-check,
// and a timing phase of at most about a second with a loose precision; the final evaluation uses
// eval::EvalOptions{} (the full protocol).
eval::EvalOptions quick_step_options();

// A correct candidate is kept only when it beats the best speedup by this fraction: the quick
// timing's noise alone should not replace the best.
inline constexpr double kMinGain = 0.01;

struct AgentOptions {
  eval::Ledger budget;  // per workload; a zero field is no limit
  std::string out_dir;  // the solutions directory written (docs/SOLUTIONS.md)
  eval::EvalOptions step_eval = quick_step_options();
  eval::EvalOptions final_eval;
  const eval::ReferenceCache* reference_cache = nullptr;
  std::optional<runtime::Calibration> calibration;  // for roofline_ms and the steps' roofline fractions
  // A correct candidate is kept when its speedup exceeds the best's by this fraction (kMinGain);
  // -1 or below: every correct one is (tests of the loop's mechanics, which must not depend on speed).
  double min_gain = kMinGain;
};

struct AgentRun {
  WorkloadAnalysis analysis;
  std::vector<Step> steps;
  FinalRecord final;
  std::string trajectory;  // its path
};

// The suggested layer moves on after this many proposals in it without a kept one.
inline constexpr int kLayerPatience = 3;
// The loop ends after this many proposals in a row that had nothing to evaluate (a policy that
// answers nothing usable must not spin outside the evaluation budget).
inline constexpr int kMaxUnusableInARow = 5;

// Where the loop writes a workload's files under `out_dir`: the trajectory
// PATTERN/WORKLOAD.trajectory.jsonl and each step's candidate under PATTERN/WORKLOAD.steps/.
std::string trajectory_path(const std::string& out_dir, const suite::WorkloadEntry& w);

// Runs the loop on one workload. Throws only for what stops the whole run (the out directory
// cannot be written, the workload cannot be bound); anything a candidate does is a step.
AgentRun run_agent(Policy& policy, runtime::Backend& backend, const suite::WorkloadEntry& w,
                   const AgentOptions& options);

}  // namespace ekb::agent
