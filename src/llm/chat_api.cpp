#include "llm/chat_api.h"

#include <algorithm>

#include "llm/anthropic_messages_api.h"
#include "llm/openai_chat_api.h"

namespace ekb::llm {

std::string ChatApi::error_message(const std::string& body) {
  nlohmann::json j = nlohmann::json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object() || !j.contains("error")) return "";
  const nlohmann::json& e = j["error"];
  if (e.is_string()) return e.get<std::string>();  // some gateways and llama.cpp's older servers
  if (!e.is_object()) return "";
  std::string message = e.contains("message") && e["message"].is_string() ? e["message"].get<std::string>() : "";
  std::string type = e.contains("type") && e["type"].is_string() ? e["type"].get<std::string>() : "";
  return type.empty() ? message : type + ": " + message;
}

nlohmann::json ChatApi::parse_object(const std::string& body) {
  nlohmann::json j = nlohmann::json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) {
    std::string start = body.substr(0, 120);
    for (char& c : start)
      if (c == '\n' || c == '\r') c = ' ';
    throw MalformedReply("the reply is not a JSON object (" + std::to_string(body.size()) + " bytes: \"" + start +
                         (body.size() > 120 ? "...\")" : "\")"));
  }
  return j;
}

HttpRequest ChatApi::json_post(const ModelProfile& profile, std::string url,
                               std::vector<std::pair<std::string, std::string>> headers, const nlohmann::json& body) {
  HttpRequest http;
  http.url = std::move(url);
  http.headers = std::move(headers);
  http.headers.insert(http.headers.begin(), {"Content-Type", "application/json"});
  http.body = body.dump();
  http.connect_timeout_s = profile.connect_timeout_s;
  http.timeout_s = profile.timeout_s;
  return http;
}

long long ChatApi::token_count(const nlohmann::json& usage, const char* key) {
  if (!usage.is_object() || !usage.contains(key) || !usage[key].is_number_integer()) return 0;
  return std::max(0LL, usage[key].get<long long>());
}

std::unique_ptr<ChatApi> make_chat_api(ApiKind kind) {
  if (kind == ApiKind::Anthropic) return std::make_unique<AnthropicMessagesApi>();
  return std::make_unique<OpenAiChatApi>();
}

}  // namespace ekb::llm
