// The `llm` policy (docs/AGENT.md, "The llm policy"): each proposal is one request to a model
// profile of docs/GENERATION.md through its client (retries, concurrency, response cache, replay,
// request log). The prompt is a pure function of the state (agent/llm_prompt.h) and the reply is
// read into one layer's text (agent/llm_reply.h); the call's tokens, cost and time are charged to
// the proposal whatever the reply was.
#pragma once
#include <memory>
#include <optional>
#include <string>

#include "agent/policy.h"
#include "llm/llm_client.h"

namespace ekb::agent {

// What `ekb agent --policy llm` takes; the options of `ekb generate`.
struct LlmPolicyOptions {
  std::string profile;                // the model profile's name
  std::string models_path;            // empty: llm::default_models_path()
  std::optional<double> temperature;  // empty: the profile's
  llm::CacheMode cache_mode = llm::CacheMode::ReadWrite;  // --replay: Replay; --no-cache: Off
  std::string cache_dir;              // empty: runtime::default_cache_dir()
  std::string log_path;               // JSONL request log; empty: none
  // The requests' sample index (the seed and a part of the cache key): another value asks the
  // model afresh, for independent trajectories of one workload.
  int sample = 0;
};

class LlmPolicy : public Policy {
 public:
  // Throws llm::MissingApiKey (unless replaying), as the client does.
  LlmPolicy(llm::ModelProfile profile, llm::ClientOptions client_options, double temperature, int sample = 0);

  std::string name() const override { return "llm"; }
  std::string model() const override { return client_.profile().model; }
  // Throws llm::ReplayMiss when replaying a state the cache has no answer for (the trajectory left
  // the recorded one: continuing would make one that is neither recorded nor real).
  Proposal propose(const AgentState& state) override;

 private:
  llm::LlmClient client_;
  double temperature_;
  int sample_;
};

// The profile from the models file and its client. Throws llm::ConfigError (a malformed file or an
// unknown profile, `file:line:col:`) and llm::MissingApiKey: the command's usage errors.
std::unique_ptr<Policy> make_llm_policy(const LlmPolicyOptions& options);

}  // namespace ekb::agent
