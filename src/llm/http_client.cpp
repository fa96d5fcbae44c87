#include "llm/http_client.h"

#include <curl/curl.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <memory>
#include <mutex>
#include <stdexcept>

namespace ekb::llm {

namespace {

// curl_global_init is not thread-safe; every other libcurl call made here is.
void init_curl_once() {
  static std::once_flag once;
  std::call_once(once, [] {
    if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) throw std::runtime_error("libcurl failed to initialize");
  });
}

size_t append_body(char* data, size_t size, size_t count, void* user) {
  static_cast<std::string*>(user)->append(data, size * count);
  return size * count;
}

size_t record_header(char* data, size_t size, size_t count, void* user) {
  auto* headers = static_cast<std::map<std::string, std::string>*>(user);
  std::string line(data, size * count);
  if (line.starts_with("HTTP/")) headers->clear();  // a new response (after a 100 Continue or a redirect)
  const size_t colon = line.find(':');
  if (colon != std::string::npos) {
    std::string name = line.substr(0, colon);
    std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::tolower(c); });
    std::string value = line.substr(colon + 1);
    const auto not_space = [](unsigned char c) { return !std::isspace(c); };
    value.erase(value.begin(), std::find_if(value.begin(), value.end(), not_space));
    value.erase(std::find_if(value.rbegin(), value.rend(), not_space).base(), value.end());
    (*headers)[name] = value;
  }
  return size * count;
}

long milliseconds(double seconds) { return std::max(1L, static_cast<long>(seconds * 1000 + 0.5)); }

}  // namespace

HttpResponse http_post(const HttpRequest& request) {
  init_curl_once();
  HttpResponse response;
  std::unique_ptr<CURL, decltype(&curl_easy_cleanup)> curl(curl_easy_init(), curl_easy_cleanup);
  if (!curl) {
    response.transport_error = "libcurl could not create a handle";
    return response;
  }
  curl_slist* header_list = nullptr;
  for (const auto& [name, value] : request.headers)
    header_list = curl_slist_append(header_list, (name + ": " + value).c_str());
  // libcurl would otherwise send "Expect: 100-continue" for large bodies and wait for the server.
  header_list = curl_slist_append(header_list, "Expect:");
  std::unique_ptr<curl_slist, decltype(&curl_slist_free_all)> headers_guard(header_list, curl_slist_free_all);

  CURL* h = curl.get();
  char error_buffer[CURL_ERROR_SIZE] = {0};
  curl_easy_setopt(h, CURLOPT_URL, request.url.c_str());
  curl_easy_setopt(h, CURLOPT_POST, 1L);
  curl_easy_setopt(h, CURLOPT_POSTFIELDS, request.body.data());
  curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(request.body.size()));
  curl_easy_setopt(h, CURLOPT_HTTPHEADER, header_list);
  curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, milliseconds(request.connect_timeout_s));
  curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, milliseconds(request.timeout_s));
  curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);  // timeouts without SIGALRM: safe in threads
  curl_easy_setopt(h, CURLOPT_ACCEPT_ENCODING, "");  // whatever compression libcurl supports
  curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, append_body);
  curl_easy_setopt(h, CURLOPT_WRITEDATA, &response.body);
  curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, record_header);
  curl_easy_setopt(h, CURLOPT_HEADERDATA, &response.headers);
  curl_easy_setopt(h, CURLOPT_ERRORBUFFER, error_buffer);

  const auto start = std::chrono::steady_clock::now();
  CURLcode rc = curl_easy_perform(h);
  response.elapsed_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (rc != CURLE_OK) {
    response.status = 0;
    response.timed_out = rc == CURLE_OPERATION_TIMEDOUT;
    response.transport_error = std::string(curl_easy_strerror(rc)) + (error_buffer[0] ? std::string(": ") + error_buffer : "");
    return response;
  }
  long status = 0;
  curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
  response.status = static_cast<int>(status);
  return response;
}

}  // namespace ekb::llm
