#include "llm/request_log.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <filesystem>
#include <stdexcept>

namespace ekb::llm {

namespace {

bool is_credential_header(std::string name) {
  std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::tolower(c); });
  return name == "authorization" || name == "proxy-authorization" || name == "x-api-key" || name == "api-key" ||
         name == "cookie" || name == "set-cookie";
}

// A body as JSON when it is JSON (readable in the log), else as a string.
nlohmann::json body_json(const std::string& body) {
  nlohmann::json j = nlohmann::json::parse(body, nullptr, /*allow_exceptions=*/false);
  return j.is_discarded() ? nlohmann::json(body) : j;
}

std::string utc_now() {
  auto now = std::chrono::system_clock::now();
  std::time_t t = std::chrono::system_clock::to_time_t(now);
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000;
  char buf[40];
  std::tm tm{};
  gmtime_r(&t, &tm);
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
  return std::string(buf) + "." + std::to_string(1000 + ms).substr(1) + "Z";
}

}  // namespace

std::string redact(std::string text, const std::vector<std::string>& secrets) {
  for (const std::string& s : secrets) {
    if (s.empty()) continue;
    for (size_t at = text.find(s); at != std::string::npos; at = text.find(s, at + kRedacted.size()))
      text.replace(at, s.size(), kRedacted);
  }
  return text;
}

RequestLog::RequestLog(const std::string& path, std::vector<std::string> secrets) : secrets_(std::move(secrets)) {
  if (path.empty()) return;
  std::error_code ec;
  const auto parent = std::filesystem::path(path).parent_path();
  if (!parent.empty()) std::filesystem::create_directories(parent, ec);
  out_.open(path, std::ios::app | std::ios::binary);
  if (!out_) throw std::runtime_error("cannot open the request log " + path);
}

void RequestLog::record(const Exchange& e) {
  if (!out_.is_open()) return;
  nlohmann::json line = {{"time", utc_now()}, {"profile", e.profile}, {"sample", e.sample},
                         {"attempt", e.attempt}, {"outcome", e.outcome}};
  if (e.request) {
    nlohmann::json headers = nlohmann::json::object();
    for (const auto& [name, value] : e.request->headers)
      headers[name] = is_credential_header(name) ? std::string(kRedacted) : value;
    line["request"] = {{"url", e.request->url}, {"headers", headers}, {"body", body_json(e.request->body)}};
  }
  if (e.response) {
    nlohmann::json r = {{"status", e.response->status}, {"elapsed_s", e.response->elapsed_s}};
    nlohmann::json headers = nlohmann::json::object();
    for (const auto& [name, value] : e.response->headers)
      headers[name] = is_credential_header(name) ? std::string(kRedacted) : value;
    r["headers"] = headers;
    r["body"] = body_json(e.response->body);
    if (e.response->transport_failed()) r["transport_error"] = e.response->transport_error;
    if (e.response->timed_out) r["timed_out"] = true;
    line["response"] = r;
  }
  if (e.retry_in_s) line["retry_in_s"] = *e.retry_in_s;
  // Masked last, over the whole serialized line: a key echoed anywhere (an error body, a URL) is caught too.
  std::string text = redact(line.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace), secrets_);
  std::lock_guard lock(mutex_);
  out_ << text << '\n';
  out_.flush();
}

}  // namespace ekb::llm
