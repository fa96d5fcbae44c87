#include "eval/result.h"

namespace ekb::eval {

Ledger& Ledger::operator+=(const Ledger& o) {
  llm_calls += o.llm_calls;
  input_tokens += o.input_tokens;
  output_tokens += o.output_tokens;
  cost_usd += o.cost_usd;
  evaluations += o.evaluations;
  wall_s += o.wall_s;
  return *this;
}

}  // namespace ekb::eval
