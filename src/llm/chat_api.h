// The two chat wire protocols behind one interface: a ChatApi turns a request into the HTTP
// request its server expects and the server's reply into text and token usage. It does no I/O;
// LlmClient sends, retries, caches and logs.
#pragma once
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>

#include "llm/http_client.h"
#include "llm/model_profile.h"

namespace ekb::llm {

struct ChatRequest {
  std::string system;  // may be empty
  std::string user;
  double temperature = 0;
  int max_tokens = 4096;
  // Sent as the seed where the protocol has one (openai), so that sample i of a prompt is drawn
  // from its own, reproducible stream on servers that honour seeds (vLLM, llama.cpp).
  std::optional<int> seed;
};

struct ChatReply {
  std::string text;
  long long input_tokens = 0;
  long long output_tokens = 0;
  std::string finish_reason;  // "stop", "length", "end_turn", "max_tokens", ... as the server said
  std::string model;          // the model the server says answered
};

// A reply that arrived (HTTP 200) but cannot be read: not JSON, or not the protocol's shape.
class MalformedReply : public std::runtime_error {
  using std::runtime_error::runtime_error;
};

class ChatApi {
 public:
  virtual ~ChatApi() = default;
  virtual ApiKind kind() const = 0;
  // `api_key` may be empty (no authentication header is sent then).
  virtual HttpRequest build_request(const ModelProfile& profile, const ChatRequest& request,
                                    const std::string& api_key) const = 0;
  // The reply of a 200 response. Throws MalformedReply.
  virtual ChatReply parse_reply(const std::string& body) const = 0;
  // The server's own explanation in an error response's body: `error.message` (and `error.type`),
  // the shape both protocols use; empty if the body has another shape.
  static std::string error_message(const std::string& body);

 protected:
  // The body as a JSON object; MalformedReply (with the start of the body) otherwise.
  static nlohmann::json parse_object(const std::string& body);
  // A POST of `body` as JSON to `url` with the profile's timeouts.
  static HttpRequest json_post(const ModelProfile& profile, std::string url,
                               std::vector<std::pair<std::string, std::string>> headers, const nlohmann::json& body);
  // A non-negative integer field of `usage`, 0 when absent (servers differ in what they report).
  static long long token_count(const nlohmann::json& usage, const char* key);
};

std::unique_ptr<ChatApi> make_chat_api(ApiKind kind);

}  // namespace ekb::llm
