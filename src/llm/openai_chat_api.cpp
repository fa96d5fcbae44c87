#include "llm/openai_chat_api.h"

namespace ekb::llm {

HttpRequest OpenAiChatApi::build_request(const ModelProfile& profile, const ChatRequest& request,
                                         const std::string& api_key) const {
  nlohmann::json messages = nlohmann::json::array();
  if (!request.system.empty()) messages.push_back({{"role", "system"}, {"content", request.system}});
  messages.push_back({{"role", "user"}, {"content", request.user}});
  nlohmann::json body = {{"model", profile.model},
                         {"messages", messages},
                         {"temperature", request.temperature},
                         {"max_tokens", request.max_tokens},
                         {"stream", false}};
  if (request.seed) body["seed"] = *request.seed;
  std::vector<std::pair<std::string, std::string>> headers;
  if (!api_key.empty()) headers.emplace_back("Authorization", "Bearer " + api_key);
  return json_post(profile, profile.endpoint + "/chat/completions", std::move(headers), body);
}

ChatReply OpenAiChatApi::parse_reply(const std::string& body) const {
  nlohmann::json j = parse_object(body);
  if (!j.contains("choices") || !j["choices"].is_array() || j["choices"].empty() || !j["choices"][0].is_object())
    throw MalformedReply("the reply has no choices[0]");
  const nlohmann::json& choice = j["choices"][0];
  if (!choice.contains("message") || !choice["message"].is_object())
    throw MalformedReply("the reply's choices[0] has no message");
  const nlohmann::json& message = choice["message"];
  ChatReply reply;
  // content is null when the model refused or only called tools: no text, which extraction reports as no_code.
  if (message.contains("content") && message["content"].is_string()) reply.text = message["content"].get<std::string>();
  if (choice.contains("finish_reason") && choice["finish_reason"].is_string())
    reply.finish_reason = choice["finish_reason"].get<std::string>();
  if (j.contains("model") && j["model"].is_string()) reply.model = j["model"].get<std::string>();
  if (j.contains("usage")) {
    reply.input_tokens = token_count(j["usage"], "prompt_tokens");
    reply.output_tokens = token_count(j["usage"], "completion_tokens");
  }
  return reply;
}

}  // namespace ekb::llm
