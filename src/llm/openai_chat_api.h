// OpenAI Chat Completions (POST {endpoint}/chat/completions), the protocol vLLM, llama.cpp's
// server, Ollama and most hosted gateways speak.
#pragma once
#include "llm/chat_api.h"

namespace ekb::llm {

class OpenAiChatApi : public ChatApi {
 public:
  ApiKind kind() const override { return ApiKind::OpenAI; }
  HttpRequest build_request(const ModelProfile& profile, const ChatRequest& request,
                            const std::string& api_key) const override;
  ChatReply parse_reply(const std::string& body) const override;
};

}  // namespace ekb::llm
