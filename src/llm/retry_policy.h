// When to try a request again and how long to wait first: on 429, 5xx and transport failures
// (refused connection, timeout, reply cut short), exponential backoff with full jitter, or exactly
// what the server asked for in Retry-After (seconds or an HTTP date) / retry-after-ms.
#pragma once
#include <optional>
#include <random>

#include "llm/http_client.h"

namespace ekb::llm {

struct RetryPolicy {
  int max_retries = 4;
  double backoff_initial_s = 1.0;
  double backoff_max_s = 60.0;

  // Whether `response` is worth another attempt.
  static bool retryable(const HttpResponse& response);
  // The wait before retry number `retry` (0 for the first retry): the server's Retry-After if it
  // sent one (capped at backoff_max_s), else a uniform draw from [0, min(max, initial * 2^retry)].
  double delay_s(int retry, const HttpResponse& response, std::mt19937_64& rng) const;
};

// The server's requested wait in seconds, from `retry-after-ms` or `Retry-After` (delta seconds
// or an HTTP date), if present and readable.
std::optional<double> retry_after_s(const HttpResponse& response);

}  // namespace ekb::llm
