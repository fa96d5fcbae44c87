// Anthropic Messages (POST {endpoint}/v1/messages, API version 2023-06-01).
#pragma once
#include "llm/chat_api.h"

namespace ekb::llm {

class AnthropicMessagesApi : public ChatApi {
 public:
  ApiKind kind() const override { return ApiKind::Anthropic; }
  HttpRequest build_request(const ModelProfile& profile, const ChatRequest& request,
                            const std::string& api_key) const override;
  ChatReply parse_reply(const std::string& body) const override;
};

}  // namespace ekb::llm
