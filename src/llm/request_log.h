// Every HTTP exchange with a model server, one JSON object per line (JSONL), appended as it
// happens: what was asked, what came back, how long it took, and what the client did next.
// Secrets never reach the file: authentication headers are replaced and any occurrence of a
// known secret (the profile's key) in any text is masked.
#pragma once
#include <fstream>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "llm/http_client.h"

namespace ekb::llm {

inline constexpr std::string_view kRedacted = "[REDACTED]";

// `text` with every occurrence of each non-empty secret replaced by kRedacted.
std::string redact(std::string text, const std::vector<std::string>& secrets);

class RequestLog {
 public:
  // Appends to `path` (created with its directory); an empty path logs nothing.
  RequestLog(const std::string& path, std::vector<std::string> secrets);

  struct Exchange {
    std::string profile;
    int sample = 0;
    int attempt = 0;  // 0 for the first try
    const HttpRequest* request = nullptr;
    const HttpResponse* response = nullptr;
    std::string outcome;  // "ok", "retry", "failed", "malformed"
    std::optional<double> retry_in_s;
  };
  void record(const Exchange& e);  // thread-safe; flushed per line

 private:
  std::mutex mutex_;
  std::ofstream out_;
  std::vector<std::string> secrets_;
};

}  // namespace ekb::llm
