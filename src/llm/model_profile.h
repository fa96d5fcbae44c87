// Named model profiles: which server and model to ask, how (timeouts, retries, concurrency), and
// what it costs. Read from a TOML file (docs/GENERATION.md); every mistake is reported as
// `file:line:col: message`. A profile holds the NAME of the environment variable with the API key,
// never the key itself, so the file can be committed and shared.
#pragma once
#include <map>
#include <stdexcept>
#include <string>
#include <string_view>

namespace ekb::llm {

// The wire protocol a profile speaks.
enum class ApiKind { OpenAI, Anthropic };  // Chat Completions (vLLM, llama.cpp, Ollama, gateways); Messages
std::string_view api_kind_name(ApiKind k);  // "openai", "anthropic"

struct ModelProfile {
  std::string name;
  ApiKind api = ApiKind::OpenAI;
  // Base URL as the vendors' SDKs take it: ".../v1" for openai (+ /chat/completions),
  // "https://api.anthropic.com" for anthropic (+ /v1/messages).
  std::string endpoint;
  std::string model;
  std::string api_key_env;    // empty: the server needs no key (a local server)
  std::string system_prompt;  // empty: none is sent
  double temperature = 0.0;
  int max_tokens = 4096;
  double connect_timeout_s = 10;
  double timeout_s = 300;  // one request, connection to last byte
  int concurrency = 4;     // requests in flight at once
  int max_retries = 4;     // after the first attempt, on 429, 5xx and transport errors
  double backoff_initial_s = 1.0;
  double backoff_max_s = 60.0;
  double usd_per_million_input_tokens = 0.0;
  double usd_per_million_output_tokens = 0.0;

  double cost_usd(long long input_tokens, long long output_tokens) const {
    return (input_tokens * usd_per_million_input_tokens + output_tokens * usd_per_million_output_tokens) / 1e6;
  }
};

// A malformed configuration: the message starts with `file:line:col:`.
class ConfigError : public std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Every profile in a models file (`[profiles.NAME]` tables). Throws ConfigError.
std::map<std::string, ModelProfile> load_model_profiles(const std::string& path);
// Parses TOML text; `path` is only used in messages.
std::map<std::string, ModelProfile> parse_model_profiles(std::string_view text, const std::string& path);

// The profile `name` from `path`; a ConfigError that lists the file's profiles when it is absent.
ModelProfile load_model_profile(const std::string& path, const std::string& name);

// Where `ekb generate` reads profiles when --models is not given: $EKB_MODELS, else ./ekb-models.toml
// if it exists, else $XDG_CONFIG_HOME/ekb/models.toml (~/.config/ekb/models.toml).
std::string default_models_path();

}  // namespace ekb::llm
