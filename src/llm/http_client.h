// One HTTP POST over libcurl with connect and total timeouts. Transport failures (refused
// connection, timeout, a reply cut short) are reported in the response, not thrown, so that the
// retry policy can decide what to do with them.
#pragma once
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace ekb::llm {

struct HttpRequest {
  std::string url;
  std::vector<std::pair<std::string, std::string>> headers;  // name, value
  std::string body;
  double connect_timeout_s = 10;
  double timeout_s = 300;
};

struct HttpResponse {
  int status = 0;                              // 0 when no complete response arrived
  std::map<std::string, std::string> headers;  // names lower-cased; the last value of a repeated header
  std::string body;
  std::string transport_error;  // non-empty when the exchange failed below HTTP (status is then 0)
  bool timed_out = false;       // the transport error was a connect or total timeout
  double elapsed_s = 0;

  bool transport_failed() const { return !transport_error.empty(); }
};

HttpResponse http_post(const HttpRequest& request);

}  // namespace ekb::llm
