#include "llm/anthropic_messages_api.h"

namespace ekb::llm {

HttpRequest AnthropicMessagesApi::build_request(const ModelProfile& profile, const ChatRequest& request,
                                                const std::string& api_key) const {
  nlohmann::json body = {{"model", profile.model},
                         {"max_tokens", request.max_tokens},
                         {"temperature", request.temperature},
                         {"messages", nlohmann::json::array({{{"role", "user"}, {"content", request.user}}})}};
  if (!request.system.empty()) body["system"] = request.system;
  std::vector<std::pair<std::string, std::string>> headers = {{"anthropic-version", "2023-06-01"}};
  if (!api_key.empty()) headers.emplace_back("x-api-key", api_key);
  return json_post(profile, profile.endpoint + "/v1/messages", std::move(headers), body);
}

ChatReply AnthropicMessagesApi::parse_reply(const std::string& body) const {
  nlohmann::json j = parse_object(body);
  if (!j.contains("content") || !j["content"].is_array()) throw MalformedReply("the reply has no content array");
  ChatReply reply;
  // The text blocks in order; thinking and tool-use blocks carry no answer.
  for (const nlohmann::json& block : j["content"])
    if (block.is_object() && block.value("type", "") == "text" && block.contains("text") && block["text"].is_string())
      reply.text += block["text"].get<std::string>();
  if (j.contains("stop_reason") && j["stop_reason"].is_string()) reply.finish_reason = j["stop_reason"].get<std::string>();
  if (j.contains("model") && j["model"].is_string()) reply.model = j["model"].get<std::string>();
  if (j.contains("usage")) {
    const nlohmann::json& u = j["usage"];
    // Prompt-cache reads and writes are input tokens too (and billed as such, at other rates).
    reply.input_tokens = token_count(u, "input_tokens") + token_count(u, "cache_creation_input_tokens") +
                         token_count(u, "cache_read_input_tokens");
    reply.output_tokens = token_count(u, "output_tokens");
  }
  return reply;
}

}  // namespace ekb::llm
