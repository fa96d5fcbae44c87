// Model profiles from TOML: every field read, every mistake reported as file:line:col.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>

#include "llm/model_profile.h"
#include "test_paths.h"

namespace {

using ekb::llm::ConfigError;
using ekb::llm::parse_model_profiles;

// The message of the ConfigError that parsing `text` as models.toml throws ("" if none).
std::string config_error(const std::string& text) {
  try {
    parse_model_profiles(text, "models.toml");
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

TEST(ModelProfile, ReadsEveryField) {
  auto profiles = parse_model_profiles(R"(
[profiles.local]
api = "openai"
endpoint = "http://127.0.0.1:8080/v1/"
model = "qwen2.5-coder"

[profiles.claude]
api = "anthropic"
endpoint = "https://api.anthropic.com"
model = "claude-sonnet-4-5"
api_key_env = "ANTHROPIC_API_KEY"
system_prompt = "You write fast kernels."
temperature = 0.7
max_tokens = 8192
connect_timeout_s = 5
timeout_s = 120.5
concurrency = 8
max_retries = 6
backoff_initial_s = 0.5
backoff_max_s = 30
usd_per_million_input_tokens = 3.0
usd_per_million_output_tokens = 15
)",
                                       "models.toml");
  ASSERT_EQ(profiles.size(), 2u);
  const auto& local = profiles.at("local");
  EXPECT_EQ(local.api, ekb::llm::ApiKind::OpenAI);
  EXPECT_EQ(local.endpoint, "http://127.0.0.1:8080/v1");  // trailing slash dropped
  EXPECT_EQ(local.api_key_env, "");
  EXPECT_EQ(local.concurrency, 4);  // defaults
  const auto& c = profiles.at("claude");
  EXPECT_EQ(c.name, "claude");
  EXPECT_EQ(c.api, ekb::llm::ApiKind::Anthropic);
  EXPECT_EQ(c.model, "claude-sonnet-4-5");
  EXPECT_EQ(c.api_key_env, "ANTHROPIC_API_KEY");
  EXPECT_EQ(c.system_prompt, "You write fast kernels.");
  EXPECT_DOUBLE_EQ(c.temperature, 0.7);
  EXPECT_EQ(c.max_tokens, 8192);
  EXPECT_DOUBLE_EQ(c.connect_timeout_s, 5);
  EXPECT_DOUBLE_EQ(c.timeout_s, 120.5);
  EXPECT_EQ(c.concurrency, 8);
  EXPECT_EQ(c.max_retries, 6);
  EXPECT_DOUBLE_EQ(c.backoff_initial_s, 0.5);
  EXPECT_DOUBLE_EQ(c.backoff_max_s, 30);
  EXPECT_DOUBLE_EQ(c.cost_usd(1'000'000, 2'000'000), 3.0 + 30.0);
}

TEST(ModelProfile, MistakesGiveFileLineColumn) {
  const std::string head = "[profiles.x]\napi = \"openai\"\nendpoint = \"http://h/v1\"\nmodel = \"m\"\n";
  EXPECT_EQ(config_error(head + "temprature = 0.5\n").rfind("models.toml:5:1: unknown key 'temprature' in profile 'x'", 0), 0u)
      << config_error(head + "temprature = 0.5\n");
  EXPECT_EQ(config_error(head + "max_tokens = \"many\"\n").rfind("models.toml:5:14: 'max_tokens' must be an integer", 0), 0u)
      << config_error(head + "max_tokens = \"many\"\n");
  EXPECT_EQ(config_error(head + "temperature = 3.0\n").rfind("models.toml:5:15: 'temperature' must be in [0, 2]", 0), 0u)
      << config_error(head + "temperature = 3.0\n");
  EXPECT_EQ(config_error("[profiles.x]\napi = \"gemini\"\n").rfind("models.toml:2:7: 'api' must be", 0), 0u)
      << config_error("[profiles.x]\napi = \"gemini\"\n");
  EXPECT_EQ(config_error("[profiles.x]\napi = \"openai\"\nmodel = \"m\"\n").rfind("models.toml:1:1: profile 'x' lacks: endpoint", 0), 0u)
      << config_error("[profiles.x]\napi = \"openai\"\nmodel = \"m\"\n");
  EXPECT_EQ(config_error(head + "endpoint2 = [1,\n").rfind("models.toml:5:17: Error while parsing array", 0), 0u)
      << config_error(head + "endpoint2 = [1,\n");  // a TOML syntax error
  EXPECT_EQ(config_error("[profile.x]\n").rfind("models.toml:1:2: unknown top-level key 'profile'", 0), 0u)
      << config_error("[profile.x]\n");
  EXPECT_EQ(config_error(head + "endpoint = \"ftp://h\"\n").rfind("models.toml:5:", 0), 0u)  // redefined key: TOML error
      << config_error(head + "endpoint = \"ftp://h\"\n");
}

TEST(ModelProfile, AKeyPastedInPlaceOfItsVariableNameIsRefusedWithoutBeingEchoed) {
  std::string message = config_error(
      "[profiles.x]\napi = \"openai\"\nendpoint = \"http://h/v1\"\nmodel = \"m\"\napi_key_env = \"sk-proj-abc123SECRET\"\n");
  EXPECT_EQ(message.rfind("models.toml:5:15: 'api_key_env' is not an environment variable name", 0), 0u) << message;
  EXPECT_EQ(message.find("SECRET"), std::string::npos) << message;
}

TEST(ModelProfile, LoadingByNameListsTheProfilesOnAMiss) {
  std::string path = ekb::testing::private_temp_path("models", ".toml");
  std::ofstream(path) << "[profiles.a]\napi = \"openai\"\nendpoint = \"http://h/v1\"\nmodel = \"m\"\n";
  EXPECT_EQ(ekb::llm::load_model_profile(path, "a").model, "m");
  try {
    ekb::llm::load_model_profile(path, "b");
    FAIL() << "no error for a missing profile";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("no profile 'b'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("the profiles are a"), std::string::npos) << e.what();
  }
  EXPECT_THROW(ekb::llm::load_model_profile(path + ".missing", "a"), ConfigError);
}

}  // namespace
