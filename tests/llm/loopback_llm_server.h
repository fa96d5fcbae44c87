// A model server on 127.0.0.1 (ephemeral port) inside the test program, speaking OpenAI Chat
// Completions (POST /v1/chat/completions) and Anthropic Messages (POST /v1/messages) with scripted
// replies: text, errors with or without Retry-After, malformed JSON, a reply cut short, a slow
// reply. Each request is recorded, and so is the peak number of requests in flight.
#pragma once
#include <gtest/gtest.h>
#include <arpa/inet.h>
#include <httplib.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace ekb::testing_llm {

// What the server does with one request; rendered in the protocol of the request's path.
struct Reply {
  enum class Kind { Text, Error, Malformed, CutShort };
  Kind kind = Kind::Text;
  std::string text;  // Text, CutShort: the assistant's text; Error: the error message
  int status = 200;
  long long input_tokens = 100, output_tokens = 50;
  double delay_s = 0;  // before answering
  std::vector<std::pair<std::string, std::string>> headers;

  static Reply answer(std::string text, long long input_tokens = 100, long long output_tokens = 50) {
    Reply r;
    r.text = std::move(text);
    r.input_tokens = input_tokens;
    r.output_tokens = output_tokens;
    return r;
  }
  static Reply error(int status, std::string message) {
    Reply r;
    r.kind = Kind::Error;
    r.status = status;
    r.text = std::move(message);
    return r;
  }
  static Reply rate_limited(std::string retry_after) {
    Reply r = error(429, "rate limit reached");
    r.headers.emplace_back("Retry-After", std::move(retry_after));
    return r;
  }
  static Reply malformed() {
    Reply r;
    r.kind = Kind::Malformed;
    return r;
  }
  static Reply cut_short(std::string text) {
    Reply r = answer(std::move(text));
    r.kind = Kind::CutShort;
    return r;
  }
  static Reply slow(double delay_s, std::string text) {
    Reply r = answer(std::move(text));
    r.delay_s = delay_s;
    return r;
  }
};

struct Received {
  std::string path;
  std::map<std::string, std::string> headers;  // names lower-cased
  nlohmann::json body;
};

class LoopbackLlmServer {
 public:
  using Script = std::function<Reply(const Received&)>;

  LoopbackLlmServer() {
    server_.Post("/v1/chat/completions", [this](const httplib::Request& q, httplib::Response& r) { handle(q, r, false); });
    server_.Post("/v1/messages", [this](const httplib::Request& q, httplib::Response& r) { handle(q, r, true); });
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    while (!server_.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ~LoopbackLlmServer() {
    server_.stop();
    thread_.join();
  }

  int port() const { return port_; }
  std::string openai_endpoint() const { return "http://127.0.0.1:" + std::to_string(port_) + "/v1"; }
  std::string anthropic_endpoint() const { return "http://127.0.0.1:" + std::to_string(port_); }

  void set_script(Script s) {
    std::lock_guard lock(mutex_);
    script_ = std::move(s);
  }
  // Replies in this order; the last one repeats.
  void set_sequence(std::vector<Reply> replies) {
    auto shared = std::make_shared<std::pair<std::mutex, std::vector<Reply>>>();
    shared->second = std::move(replies);
    auto next = std::make_shared<size_t>(0);
    set_script([shared, next](const Received&) {
      std::lock_guard lock(shared->first);
      const auto& v = shared->second;
      return v[std::min((*next)++, v.size() - 1)];
    });
  }

  std::vector<Received> received() const {
    std::lock_guard lock(mutex_);
    return received_;
  }
  int request_count() const { return static_cast<int>(received().size()); }
  int peak_in_flight() const { return peak_; }

 private:
  void handle(const httplib::Request& q, httplib::Response& r, bool anthropic) {
    const int now = ++in_flight_;
    for (int seen = peak_; now > seen && !peak_.compare_exchange_weak(seen, now);) {
    }
    Received got{q.path, {}, nlohmann::json::parse(q.body, nullptr, false)};
    for (const auto& [name, value] : q.headers) {
      std::string lower = name;
      std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
      got.headers[lower] = value;
    }
    Script script;
    {
      std::lock_guard lock(mutex_);
      received_.push_back(got);
      script = script_;
    }
    Reply reply = script ? script(got) : Reply::answer("hello");
    if (reply.delay_s > 0) std::this_thread::sleep_for(std::chrono::duration<double>(reply.delay_s));
    for (const auto& [name, value] : reply.headers) r.set_header(name, value);
    r.status = reply.status;
    const std::string model = got.body.is_object() ? got.body.value("model", "") : "";
    switch (reply.kind) {
      case Reply::Kind::Text: r.set_content(success_body(reply, model, anthropic), "application/json"); break;
      case Reply::Kind::Error: r.set_content(error_body(reply, anthropic), "application/json"); break;
      case Reply::Kind::Malformed: r.set_content("{\"choices\": [ {\"message\": ", "application/json"); break;
      case Reply::Kind::CutShort: {
        // Promises the whole body, sends half, then drops the connection.
        auto body = std::make_shared<std::string>(success_body(reply, model, anthropic));
        r.set_content_provider(body->size(), "application/json",
                               [body](size_t offset, size_t, httplib::DataSink& sink) {
                                 if (offset == 0) sink.write(body->data(), body->size() / 2);
                                 return false;
                               });
        break;
      }
    }
    --in_flight_;
  }

  static std::string success_body(const Reply& reply, const std::string& model, bool anthropic) {
    if (anthropic)
      return nlohmann::json{{"id", "msg_test"},
                            {"type", "message"},
                            {"role", "assistant"},
                            {"model", model},
                            {"content", {{{"type", "text"}, {"text", reply.text}}}},
                            {"stop_reason", "end_turn"},
                            {"usage", {{"input_tokens", reply.input_tokens}, {"output_tokens", reply.output_tokens}}}}
          .dump();
    return nlohmann::json{
        {"id", "chatcmpl-test"},
        {"object", "chat.completion"},
        {"model", model},
        {"choices", {{{"index", 0}, {"message", {{"role", "assistant"}, {"content", reply.text}}}, {"finish_reason", "stop"}}}},
        {"usage",
         {{"prompt_tokens", reply.input_tokens},
          {"completion_tokens", reply.output_tokens},
          {"total_tokens", reply.input_tokens + reply.output_tokens}}}}
        .dump();
  }

  static std::string error_body(const Reply& reply, bool anthropic) {
    if (anthropic)
      return nlohmann::json{{"type", "error"}, {"error", {{"type", "api_error"}, {"message", reply.text}}}}.dump();
    return nlohmann::json{{"error", {{"message", reply.text}, {"type", "server_error"}}}}.dump();
  }

  httplib::Server server_;
  std::thread thread_;
  int port_ = 0;
  mutable std::mutex mutex_;
  Script script_;
  std::vector<Received> received_;
  std::atomic<int> in_flight_{0}, peak_{0};
};

// A port on 127.0.0.1 that nothing listens on (bound, then released).
inline int closed_port() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  ::close(fd);
  return ntohs(addr.sin_port);
}

}  // namespace ekb::testing_llm
