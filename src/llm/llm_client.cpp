#include "llm/llm_client.h"

#include <fmt/core.h>

#include <chrono>
#include <cstdlib>
#include <random>
#include <thread>

namespace ekb::llm {

namespace {

std::string read_api_key(const ModelProfile& p, CacheMode mode) {
  if (p.api_key_env.empty() || mode == CacheMode::Replay) return "";
  const char* key = std::getenv(p.api_key_env.c_str());
  if (!key || !*key)
    throw MissingApiKey(fmt::format("profile '{}' needs an API key: set the environment variable {}", p.name,
                                    p.api_key_env));
  return key;
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// What went wrong in one failed exchange, in a line.
std::string describe_failure(const HttpResponse& r) {
  if (r.transport_failed()) return (r.timed_out ? "timed out: " : "unreachable: ") + r.transport_error;
  std::string server = ChatApi::error_message(r.body);
  if (server.empty()) server = r.body.substr(0, 200);
  return fmt::format("HTTP {}{}", r.status, server.empty() ? "" : ": " + server);
}

}  // namespace

LlmClient::LlmClient(ModelProfile profile, ClientOptions options)
    : profile_(std::move(profile)),
      options_(std::move(options)),
      api_key_(read_api_key(profile_, options_.cache_mode)),
      api_(make_chat_api(profile_.api)),
      retry_{profile_.max_retries, profile_.backoff_initial_s, profile_.backoff_max_s},
      limiter_(profile_.concurrency),
      cache_(options_.cache_root),
      log_(options_.log_path, {api_key_}) {}

CallOutcome LlmClient::complete(const ChatRequest& request, int sample, std::string_view cache_identity) {
  const std::string key = ResponseCache::key(profile_, request, sample, cache_identity);
  if (options_.cache_mode != CacheMode::Off) {
    if (auto stored = cache_.find(key)) {
      CallOutcome out;
      out.ok = true;
      out.cached = true;
      out.reply = stored->reply;
      out.llm_calls = stored->llm_calls;
      out.input_tokens = stored->reply.input_tokens;
      out.output_tokens = stored->reply.output_tokens;
      out.cost_usd = stored->cost_usd;
      out.latency_s = stored->latency_s;
      out.wall_s = stored->wall_s;
      return out;
    }
    if (options_.cache_mode == CacheMode::Replay)
      throw ReplayMiss(fmt::format(
          "replay: no stored answer for profile '{}' (model {}), sample {}, prompt hash {} (cache key {} in {})\n"
          "  hint: run once without --replay to record the answers",
          profile_.name, profile_.model, sample, prompt_hash(request.user), key, cache_.directory()));
  }
  CallOutcome out = call_server(request, sample);
  if (out.ok && options_.cache_mode == CacheMode::ReadWrite)
    cache_.store(key, {out.reply, out.llm_calls, out.latency_s, out.wall_s, out.cost_usd});
  return out;
}

CallOutcome LlmClient::call_server(const ChatRequest& request, int sample) {
  const auto start = std::chrono::steady_clock::now();
  const HttpRequest http = api_->build_request(profile_, request, api_key_);
  std::mt19937_64 rng(std::random_device{}() ^ (static_cast<uint64_t>(sample) << 32));
  CallOutcome out;
  for (int attempt = 0;; ++attempt) {
    HttpResponse response;
    {
      ConcurrencyLimiter::Slot slot(limiter_);  // not held while backing off
      response = http_post(http);
    }
    ++out.llm_calls;
    RequestLog::Exchange exchange{profile_.name, sample, attempt, &http, &response, "", std::nullopt};
    if (response.status == 200) {
      try {
        out.reply = api_->parse_reply(response.body);
        out.ok = true;
        out.input_tokens += out.reply.input_tokens;
        out.output_tokens += out.reply.output_tokens;
        out.latency_s = response.elapsed_s;
        exchange.outcome = "ok";
      } catch (const MalformedReply& e) {
        // A server that answers 200 with garbage will most likely do it again: not retried.
        out.error = "malformed reply: " + std::string(e.what());
        exchange.outcome = "malformed";
      }
      log_.record(exchange);
      break;
    }
    const bool again = RetryPolicy::retryable(response) && attempt < retry_.max_retries;
    if (!again) {
      out.error = fmt::format("{} ({} attempt{})", describe_failure(response), attempt + 1, attempt ? "s" : "");
      out.latency_s = response.elapsed_s;
      exchange.outcome = "failed";
      log_.record(exchange);
      break;
    }
    const double wait = retry_.delay_s(attempt, response, rng);
    exchange.outcome = "retry";
    exchange.retry_in_s = wait;
    log_.record(exchange);
    std::this_thread::sleep_for(std::chrono::duration<double>(wait));
  }
  out.cost_usd = profile_.cost_usd(out.input_tokens, out.output_tokens);
  out.wall_s = seconds_since(start);
  out.error = redact(out.error, {api_key_});
  return out;
}

}  // namespace ekb::llm
