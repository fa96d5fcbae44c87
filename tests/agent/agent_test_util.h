// Shared set-up of the agent tests: loop options short enough for tests, never depending on speed.
#pragma once
#include <string>

#include "agent/agent_loop.h"
#include "eval/eval_test_util.h"

namespace ekb::testing {

// Steps with one trial and a short timing; the final evaluation the harness tests' fast options;
// every correct candidate kept (min_gain -1), so that no outcome depends on the machine's speed.
inline agent::AgentOptions agent_test_options(const std::string& out_dir, int evaluations) {
  agent::AgentOptions o;
  o.out_dir = out_dir;
  o.budget.evaluations = evaluations;
  o.step_eval = fast_options();
  o.step_eval.trials = 1;
  o.step_eval.recheck_trials = 0;
  o.final_eval = fast_options();
  o.min_gain = -1;
  return o;
}

}  // namespace ekb::testing
