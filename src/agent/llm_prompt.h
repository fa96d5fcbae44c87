// The request the llm policy sends for one proposal (docs/AGENT.md, "The llm policy"): the task,
// the analysis, the best program, what the steps so far did, the layer to work on with its legal
// directives, and the reply format. A pure function of the state: the same state gives the same
// text, so the response cache answers a replayed trajectory.
#pragma once
#include <string>
#include <string_view>

#include "agent/policy.h"

namespace ekb::agent {

// The fence info word of a layer block in the prompt and the reply.
inline constexpr std::string_view kLayerFence = "ekb";

// What of the state a prompt shows. Measured: everything, what the model is sent. Decisions: the
// same without the measured values (times, speedups, the loop's messages about them): the
// response cache's identity of the request, so that a replay whose timings differ by noise but
// whose outcomes agree finds the recorded answers.
enum class PromptDetail { Measured, Decisions };

std::string llm_prompt(const AgentState& state, PromptDetail detail = PromptDetail::Measured);

// The header target a layer block is written for on this backend: "cpu" or "gpu" ("" when the
// backend is unknown, a block for every target).
std::string layer_block_target(std::string_view backend);

}  // namespace ekb::agent
