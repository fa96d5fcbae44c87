#include "llm/response_cache.h"

#include <fmt/core.h>

#include <sys/stat.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#define XXH_INLINE_ALL  // header-only use: nothing extra to link
#include <xxhash.h>

namespace ekb::llm {

std::string prompt_hash(std::string_view text) {
  return fmt::format("{:016x}", static_cast<unsigned long long>(XXH3_64bits(text.data(), text.size())));
}

ResponseCache::ResponseCache(const std::string& cache_root) : files_(cache_root, "llm") {}

std::string ResponseCache::key(const ModelProfile& profile, const ChatRequest& request, int sample,
                               std::string_view identity) {
  // Everything that determines the answer, nothing that does not (the profile's name, timeouts,
  // retries, prices, the key). The version tag changes when the stored format does.
  return runtime::content_key({"ekb.llm-cache/1", api_kind_name(profile.api), profile.endpoint, profile.model,
                               request.system, identity.empty() ? request.user : "identity:" + std::string(identity),
                               fmt::format("{:.6g}", request.temperature),
                               std::to_string(request.max_tokens), std::to_string(sample)});
}

std::optional<StoredCall> ResponseCache::find(const std::string& key) const {
  std::ifstream in(files_.artifact_path(key, ".json"), std::ios::binary);
  if (!in) return std::nullopt;
  std::stringstream ss;
  ss << in.rdbuf();
  nlohmann::json j = nlohmann::json::parse(ss.str(), nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object() || j.value("schema", "") != "ekb.llm-cache/1") return std::nullopt;
  try {
    StoredCall c;
    const nlohmann::json& r = j.at("reply");
    c.reply.text = r.at("text").get<std::string>();
    c.reply.input_tokens = r.at("input_tokens").get<long long>();
    c.reply.output_tokens = r.at("output_tokens").get<long long>();
    c.reply.finish_reason = r.at("finish_reason").get<std::string>();
    c.reply.model = r.at("model").get<std::string>();
    c.llm_calls = j.at("llm_calls").get<int>();
    c.latency_s = j.at("latency_s").get<double>();
    c.wall_s = j.at("wall_s").get<double>();
    c.cost_usd = j.at("cost_usd").get<double>();
    return c;
  } catch (const nlohmann::json::exception&) {
    return std::nullopt;  // an entry of another shape is a miss, and is overwritten
  }
}

void ResponseCache::store(const std::string& key, const StoredCall& call) const {
  nlohmann::json j = {{"schema", "ekb.llm-cache/1"},
                      {"reply",
                       {{"text", call.reply.text},
                        {"input_tokens", call.reply.input_tokens},
                        {"output_tokens", call.reply.output_tokens},
                        {"finish_reason", call.reply.finish_reason},
                        {"model", call.reply.model}}},
                      {"llm_calls", call.llm_calls},
                      {"latency_s", call.latency_s},
                      {"wall_s", call.wall_s},
                      {"cost_usd", call.cost_usd}};
  try {
    std::string tmp = files_.temporary_path(".json");
    {
      std::ofstream out(tmp, std::ios::binary);
      out << j.dump(1);
      if (!out) {
        std::remove(tmp.c_str());
        return;
      }
    }
    ::chmod(files_.publish(tmp, key, ".json").c_str(), 0644);  // data, not a program
  } catch (const std::exception&) {
    // A read-only or full cache costs a repeated call later, never this answer.
  }
}

}  // namespace ekb::llm
