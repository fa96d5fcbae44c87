// A LEKA run's budget per workload: one eval::Ledger of limits (docs/AGENT.md, "Budget"), read
// from `--budget evaluations=16,wall=600`; a zero field is no limit.
#pragma once
#include <string>

#include "eval/result.h"

namespace ekb::agent {

// "KEY=VALUE[,KEY=VALUE...]" with keys evaluations, wall (seconds), llm_calls, input_tokens,
// output_tokens, usd. Throws std::invalid_argument naming the bad part and the keys.
eval::Ledger parse_budget(const std::string& text);

// Whether `spent` reached any limit of `budget`.
bool budget_exhausted(const eval::Ledger& spent, const eval::Ledger& budget);

}  // namespace ekb::agent
