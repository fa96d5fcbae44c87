#include "agent/llm_policy.h"

#include "agent/llm_prompt.h"
#include "agent/llm_reply.h"
#include "runtime/paths.h"

namespace ekb::agent {

LlmPolicy::LlmPolicy(llm::ModelProfile profile, llm::ClientOptions client_options, double temperature, int sample)
    : client_(std::move(profile), std::move(client_options)), temperature_(temperature), sample_(sample) {}

Proposal LlmPolicy::propose(const AgentState& state) {
  const llm::ModelProfile& profile = client_.profile();
  const llm::ChatRequest request{profile.system_prompt, llm_prompt(state), temperature_, profile.max_tokens, sample_};
  llm::CallOutcome call;
  try {
    call = client_.complete(request, sample_, llm_prompt(state, PromptDetail::Decisions));
  } catch (const llm::ReplayMiss& e) {
    throw llm::ReplayMiss("step " + std::to_string(state.history.size()) + " (" +
                          std::string(layer_name(state.layer)) + " layer): " + e.what());
  }
  Proposal p = call.ok ? parse_llm_reply(call.reply.text, state)
                       : unusable_proposal(state, "the model's server failed: " + call.error);
  if (call.ok && p.text.empty() && !p.stop && (call.reply.finish_reason == "length" || call.reply.finish_reason == "max_tokens"))
    p.rationale += " (the reply reached max_tokens)";
  p.cost.llm_calls = call.llm_calls;
  p.cost.input_tokens = call.input_tokens;
  p.cost.output_tokens = call.output_tokens;
  p.cost.cost_usd = call.cost_usd;
  p.cost.wall_s = call.wall_s;
  return p;
}

std::unique_ptr<Policy> make_llm_policy(const LlmPolicyOptions& options) {
  llm::ModelProfile profile = llm::load_model_profile(
      options.models_path.empty() ? llm::default_models_path() : options.models_path, options.profile);
  const double temperature = options.temperature.value_or(profile.temperature);
  llm::ClientOptions client;
  client.cache_mode = options.cache_mode;
  client.cache_root = options.cache_dir.empty() ? runtime::default_cache_dir() : options.cache_dir;
  client.log_path = options.log_path;
  return std::make_unique<LlmPolicy>(std::move(profile), std::move(client), temperature, options.sample);
}

}  // namespace ekb::agent
