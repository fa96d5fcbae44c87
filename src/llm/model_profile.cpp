#include "llm/model_profile.h"

#include <fmt/core.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <regex>
#include <sstream>
#include <toml++/toml.h>

namespace ekb::llm {

std::string_view api_kind_name(ApiKind k) { return k == ApiKind::OpenAI ? "openai" : "anthropic"; }

namespace {

std::string where(const std::string& path, const toml::source_region& r) {
  return fmt::format("{}:{}:{}", path, r.begin.line, r.begin.column);
}

[[noreturn]] void fail_at(const std::string& path, const toml::node& node, const std::string& message) {
  throw ConfigError(where(path, node.source()) + ": " + message);
}

double number_value(const std::string& path, const toml::node& node, std::string_view key) {
  if (auto f = node.value_exact<double>()) return *f;
  if (auto i = node.value_exact<int64_t>()) return static_cast<double>(*i);
  fail_at(path, node, fmt::format("'{}' must be a number", key));
}

int64_t integer_value(const std::string& path, const toml::node& node, std::string_view key) {
  if (auto i = node.value_exact<int64_t>()) return *i;
  fail_at(path, node, fmt::format("'{}' must be an integer", key));
}

std::string string_value(const std::string& path, const toml::node& node, std::string_view key) {
  if (auto s = node.value_exact<std::string>()) return *s;
  fail_at(path, node, fmt::format("'{}' must be a string", key));
}

void check_range(const std::string& path, const toml::node& node, std::string_view key, double v, double lo,
                 double hi) {
  if (v < lo || v > hi) fail_at(path, node, fmt::format("'{}' must be in [{:g}, {:g}], not {:g}", key, lo, hi, v));
}

ModelProfile parse_profile(const std::string& path, const std::string& name, const toml::table& t) {
  ModelProfile p;
  p.name = name;
  bool has_api = false, has_endpoint = false, has_model = false;
  // One setter per key, so that an unknown key (a typo) is an error instead of silently ignored.
  using Setter = std::function<void(const toml::node&)>;
  std::map<std::string, Setter, std::less<>> setters = {
      {"api",
       [&](const toml::node& n) {
         std::string v = string_value(path, n, "api");
         if (v == "openai") p.api = ApiKind::OpenAI;
         else if (v == "anthropic") p.api = ApiKind::Anthropic;
         else fail_at(path, n, "'api' must be \"openai\" (Chat Completions) or \"anthropic\" (Messages), not \"" + v + "\"");
         has_api = true;
       }},
      {"endpoint",
       [&](const toml::node& n) {
         p.endpoint = string_value(path, n, "endpoint");
         if (!p.endpoint.starts_with("http://") && !p.endpoint.starts_with("https://"))
           fail_at(path, n, "'endpoint' must be an http:// or https:// URL");
         while (p.endpoint.ends_with("/")) p.endpoint.pop_back();
         has_endpoint = true;
       }},
      {"model",
       [&](const toml::node& n) {
         p.model = string_value(path, n, "model");
         has_model = !p.model.empty();
       }},
      {"api_key_env",
       [&](const toml::node& n) {
         p.api_key_env = string_value(path, n, "api_key_env");
         // Never echo the value: someone may have pasted the key itself here.
         static const std::regex env_name("[A-Za-z_][A-Za-z0-9_]*");
         if (!p.api_key_env.empty() && !std::regex_match(p.api_key_env, env_name))
           fail_at(path, n,
                   "'api_key_env' is not an environment variable name: it names the variable that holds the key "
                   "(e.g. \"OPENAI_API_KEY\"), never the key itself");
       }},
      {"system_prompt", [&](const toml::node& n) { p.system_prompt = string_value(path, n, "system_prompt"); }},
  };
  // The numeric keys: where each goes and its valid range.
  struct NumberKey {
    const char* key;
    double ModelProfile::*field;
    double lo, hi;
  };
  for (const NumberKey& k : {NumberKey{"temperature", &ModelProfile::temperature, 0, 2},
                             NumberKey{"connect_timeout_s", &ModelProfile::connect_timeout_s, 0.001, 3600},
                             NumberKey{"timeout_s", &ModelProfile::timeout_s, 0.001, 24 * 3600},
                             NumberKey{"backoff_initial_s", &ModelProfile::backoff_initial_s, 0, 3600},
                             NumberKey{"backoff_max_s", &ModelProfile::backoff_max_s, 0, 24 * 3600},
                             NumberKey{"usd_per_million_input_tokens", &ModelProfile::usd_per_million_input_tokens, 0, 1e6},
                             NumberKey{"usd_per_million_output_tokens", &ModelProfile::usd_per_million_output_tokens, 0, 1e6}})
    setters[k.key] = [&p, &path, k](const toml::node& n) {
      p.*k.field = number_value(path, n, k.key);
      check_range(path, n, k.key, p.*k.field, k.lo, k.hi);
    };
  struct IntegerKey {
    const char* key;
    int ModelProfile::*field;
    double lo, hi;
  };
  for (const IntegerKey& k : {IntegerKey{"max_tokens", &ModelProfile::max_tokens, 1, 1e7},
                              IntegerKey{"concurrency", &ModelProfile::concurrency, 1, 1024},
                              IntegerKey{"max_retries", &ModelProfile::max_retries, 0, 100}})
    setters[k.key] = [&p, &path, k](const toml::node& n) {
      const int64_t v = integer_value(path, n, k.key);
      check_range(path, n, k.key, static_cast<double>(v), k.lo, k.hi);
      p.*k.field = static_cast<int>(v);
    };
  for (const auto& [key, node] : t) {
    auto it = setters.find(key.str());
    if (it == setters.end()) {
      std::string known;
      for (const auto& [k, _] : setters) known += (known.empty() ? "" : ", ") + k;
      throw ConfigError(where(path, key.source()) + ": unknown key '" + std::string(key.str()) + "' in profile '" +
                        name + "'\n  hint: the keys are " + known);
    }
    it->second(node);
  }
  std::string missing;
  if (!has_api) missing += " api";
  if (!has_endpoint) missing += " endpoint";
  if (!has_model) missing += " model";
  if (!missing.empty()) fail_at(path, t, "profile '" + name + "' lacks:" + missing);
  if (p.backoff_max_s < p.backoff_initial_s)
    fail_at(path, t, "profile '" + name + "': backoff_max_s is below backoff_initial_s");
  return p;
}

}  // namespace

std::map<std::string, ModelProfile> parse_model_profiles(std::string_view text, const std::string& path) {
  toml::table doc;
  try {
    doc = toml::parse(text, path);
  } catch (const toml::parse_error& e) {
    throw ConfigError(where(path, e.source()) + ": " + std::string(e.description()));
  }
  std::map<std::string, ModelProfile> profiles;
  for (const auto& [key, node] : doc) {
    if (key.str() != "profiles")
      throw ConfigError(where(path, key.source()) + ": unknown top-level key '" + std::string(key.str()) +
                        "'\n  hint: profiles are tables [profiles.NAME]");
    const toml::table* all = node.as_table();
    if (!all) fail_at(path, node, "'profiles' must be a table of [profiles.NAME] tables");
    for (const auto& [name, profile_node] : *all) {
      const toml::table* t = profile_node.as_table();
      if (!t) fail_at(path, profile_node, "profile '" + std::string(name.str()) + "' must be a table");
      profiles.emplace(std::string(name.str()), parse_profile(path, std::string(name.str()), *t));
    }
  }
  return profiles;
}

std::map<std::string, ModelProfile> load_model_profiles(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ConfigError(path + ": cannot read the models file\n  hint: --models FILE or $EKB_MODELS (docs/GENERATION.md)");
  std::stringstream ss;
  ss << in.rdbuf();
  return parse_model_profiles(ss.str(), path);
}

ModelProfile load_model_profile(const std::string& path, const std::string& name) {
  auto profiles = load_model_profiles(path);
  auto it = profiles.find(name);
  if (it != profiles.end()) return it->second;
  std::string names;
  for (const auto& [n, _] : profiles) names += (names.empty() ? "" : ", ") + n;
  throw ConfigError(path + ": no profile '" + name + "'" +
                    (names.empty() ? std::string(" (the file defines none)") : "\n  hint: the profiles are " + names));
}

std::string default_models_path() {
  if (const char* env = std::getenv("EKB_MODELS"); env && *env) return env;
  std::error_code ec;
  if (std::filesystem::is_regular_file("ekb-models.toml", ec)) return "ekb-models.toml";
  if (const char* xdg = std::getenv("XDG_CONFIG_HOME"); xdg && *xdg) return std::string(xdg) + "/ekb/models.toml";
  if (const char* home = std::getenv("HOME"); home && *home) return std::string(home) + "/.config/ekb/models.toml";
  return "ekb-models.toml";
}

}  // namespace ekb::llm
