// A model's reply as a Proposal (docs/AGENT.md, "The llm policy"): one fenced block holding the
// whole new text of one layer, which layer it is (its header keyword, or a source language's
// fence), the action line for the trajectory and the rationale before it; or STOP. Whatever the
// reply is, the answer is a Proposal: an unusable one has an empty text and the reason in
// `rationale`.
#pragma once
#include <string_view>

#include "agent/policy.h"

namespace ekb::agent {

Proposal parse_llm_reply(std::string_view reply, const AgentState& state);

// A proposal with no text: the loop records it as "unusable" with `reason`.
Proposal unusable_proposal(const AgentState& state, std::string reason);

}  // namespace ekb::agent
