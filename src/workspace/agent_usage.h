// Token usage and cost read from a coding agent's transcript, for the budget ledger of
// `ekb workspace collect` (docs/AGENTS.md says which output each agent must be run with).
#pragma once
#include <optional>
#include <string>

#include "eval/result.h"

namespace ekb::workspace {

struct AgentUsage {
  std::string agent;  // "claude-code", "codex", "aider": whose format the transcript had
  std::string model;  // empty when the transcript does not say
  // llm_calls, input_tokens, output_tokens, cost_usd (0 where the agent reports none), wall_s
  // (0 where it reports none); evaluations are not the agent's to report.
  eval::Ledger ledger;
};

// Recognizes, in this order:
// - Claude Code `--output-format json` (one result object) or `stream-json` (its final
//   {"type":"result"} line): num_turns, usage.input_tokens (+ cache creation and cache reads: all
//   are prompt tokens the model processed), usage.output_tokens, total_cost_usd, duration_ms, and
//   the model from modelUsage;
// - Codex `exec --json` events: the usage of every turn.completed (input_tokens already include the
//   cached ones), or older streams' token_count messages (their last cumulative total);
// - Aider's console output: one "Tokens: N sent, M received." line per model call, and the last
//   "Cost: ... $X session".
// nullopt when the text is none of these.
std::optional<AgentUsage> parse_agent_usage(const std::string& transcript);

}  // namespace ekb::workspace
