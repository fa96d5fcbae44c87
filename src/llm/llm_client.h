// A model profile's client: sends a chat request through its protocol (ChatApi) with retries
// (RetryPolicy), at most `concurrency` requests in flight (ConcurrencyLimiter), answers repeated
// requests from the response cache, logs every exchange (RequestLog), and accounts for the calls,
// tokens, cost and time each answer took. Thread-safe: one client serves all of a run's threads.
#pragma once
#include <memory>
#include <stdexcept>
#include <string>

#include "llm/chat_api.h"
#include "llm/concurrency_limiter.h"
#include "llm/model_profile.h"
#include "llm/request_log.h"
#include "llm/response_cache.h"
#include "llm/retry_policy.h"

namespace ekb::llm {

enum class CacheMode {
  ReadWrite,  // answer from the cache when possible, store new answers
  Off,        // always ask the server, store nothing
  Replay,     // only the cache: a missing answer is an error (ReplayMiss), no server is contacted
};

struct ClientOptions {
  CacheMode cache_mode = CacheMode::ReadWrite;
  std::string cache_root;  // the project's cache directory (runtime::default_cache_dir())
  std::string log_path;    // JSONL request log; empty: none
};

// The profile names an environment variable for its key that is not set.
class MissingApiKey : public std::runtime_error {
  using std::runtime_error::runtime_error;
};
// Replay mode met a request it has no stored answer for.
class ReplayMiss : public std::runtime_error {
  using std::runtime_error::runtime_error;
};

// What one request came to, cached or not.
struct CallOutcome {
  bool ok = false;
  ChatReply reply;    // when ok
  std::string error;  // when not ok: what went wrong, with the attempts made (secrets masked)
  int llm_calls = 0;  // HTTP attempts, retries included
  long long input_tokens = 0, output_tokens = 0;
  double cost_usd = 0;
  double latency_s = 0;  // the answering (last) exchange
  double wall_s = 0;     // the whole call: every attempt and every wait between them
  bool cached = false;   // answered from the cache; the figures are the original call's
};

class LlmClient {
 public:
  // Reads the key from the environment now (unless replaying): throws MissingApiKey naming the variable.
  LlmClient(ModelProfile profile, ClientOptions options);

  // Never throws for server or network trouble (that is a failed outcome); throws ReplayMiss.
  // `cache_identity`, when not empty, stands for the user prompt in the cache's key
  // (ResponseCache::key): the server is still sent the whole request.
  CallOutcome complete(const ChatRequest& request, int sample, std::string_view cache_identity = {});

  const ModelProfile& profile() const { return profile_; }
  int peak_concurrency() const { return limiter_.in_flight_peak(); }

 private:
  CallOutcome call_server(const ChatRequest& request, int sample);

  ModelProfile profile_;
  ClientOptions options_;
  std::string api_key_;
  std::unique_ptr<ChatApi> api_;
  RetryPolicy retry_;
  ConcurrencyLimiter limiter_;
  ResponseCache cache_;
  RequestLog log_;
};

}  // namespace ekb::llm
