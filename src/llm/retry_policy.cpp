#include "llm/retry_policy.h"

#include <curl/curl.h>

#include <algorithm>
#include <cmath>
#include <ctime>
#include <string>

namespace ekb::llm {

bool RetryPolicy::retryable(const HttpResponse& response) {
  if (response.transport_failed()) return true;
  // 408 request timeout, 409 (Anthropic: lock contention), 429 rate limit, 5xx and Anthropic's 529 overloaded.
  return response.status == 408 || response.status == 409 || response.status == 429 || response.status >= 500;
}

std::optional<double> retry_after_s(const HttpResponse& response) {
  const auto parse_number = [](const std::string& text) -> std::optional<double> {
    try {
      size_t used = 0;
      double v = std::stod(text, &used);
      if (used == text.size() && std::isfinite(v) && v >= 0) return v;
    } catch (const std::exception&) {
    }
    return std::nullopt;
  };
  if (auto it = response.headers.find("retry-after-ms"); it != response.headers.end())
    if (auto ms = parse_number(it->second)) return *ms / 1000.0;
  auto it = response.headers.find("retry-after");
  if (it == response.headers.end()) return std::nullopt;
  if (auto s = parse_number(it->second)) return *s;
  time_t when = curl_getdate(it->second.c_str(), nullptr);  // an HTTP date
  if (when < 0) return std::nullopt;
  return std::max(0.0, std::difftime(when, std::time(nullptr)));
}

double RetryPolicy::delay_s(int retry, const HttpResponse& response, std::mt19937_64& rng) const {
  if (auto asked = retry_after_s(response)) return std::min(*asked, backoff_max_s);
  const double cap = std::min(backoff_max_s, backoff_initial_s * std::ldexp(1.0, std::min(retry, 60)));
  return std::uniform_real_distribution<double>(0.0, cap)(rng);
}

}  // namespace ekb::llm
