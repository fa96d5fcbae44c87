#include "runtime/framed_stream.h"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>

namespace ekb::runtime::framed {

namespace {

using Clock = std::chrono::steady_clock;

bool write_all(int fd, const char* p, size_t n) {
  while (n > 0) {
    ssize_t w = ::send(fd, p, n, MSG_NOSIGNAL);
    if (w < 0 && errno == ENOTSOCK) w = ::write(fd, p, n);  // a pipe (ssh's stdout on the device)
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    p += w;
    n -= static_cast<size_t>(w);
  }
  return true;
}

// Reads exactly n bytes before `deadline` (none when `forever`). Closed only when nothing at all
// was read and `first` says this is a frame's first byte.
ReadStatus read_exactly(int fd, char* p, size_t n, bool forever, Clock::time_point deadline, bool first) {
  size_t got = 0;
  while (got < n) {
    int wait_ms = -1;
    if (!forever) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
      if (left <= 0) return ReadStatus::Timeout;
      wait_ms = static_cast<int>(std::min<long long>(left, 1 << 30));
    }
    pollfd pfd{fd, POLLIN, 0};
    int pr = ::poll(&pfd, 1, wait_ms);
    if (pr < 0 && errno == EINTR) continue;
    if (pr < 0) return ReadStatus::Error;
    if (pr == 0) return ReadStatus::Timeout;
    ssize_t r = ::read(fd, p + got, n - got);
    if (r < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (r < 0) return got == 0 && first ? ReadStatus::Closed : ReadStatus::Error;  // ECONNRESET
    if (r == 0) return got == 0 && first ? ReadStatus::Closed : ReadStatus::Malformed;
    got += static_cast<size_t>(r);
  }
  return ReadStatus::Ok;
}

}  // namespace

bool write_frame(int fd, nlohmann::json header, std::string_view blob) {
  if (!blob.empty()) header["blob_bytes"] = blob.size();
  const std::string text = header.dump();
  if (text.size() > kMaxHeaderBytes) return false;
  const uint32_t n = static_cast<uint32_t>(text.size());
  const unsigned char len[4] = {static_cast<unsigned char>(n), static_cast<unsigned char>(n >> 8),
                                static_cast<unsigned char>(n >> 16), static_cast<unsigned char>(n >> 24)};
  return write_all(fd, reinterpret_cast<const char*>(len), 4) && write_all(fd, text.data(), text.size()) &&
         write_all(fd, blob.data(), blob.size());
}

std::string_view read_status_name(ReadStatus s) {
  switch (s) {
    case ReadStatus::Ok: return "ok";
    case ReadStatus::Closed: return "closed";
    case ReadStatus::Timeout: return "timed out";
    case ReadStatus::Malformed: return "malformed";
    case ReadStatus::Error: return "failed";
  }
  return "failed";
}

ReadStatus read_frame(int fd, Frame& frame, int timeout_ms) {
  const bool forever = timeout_ms < 0;
  const auto deadline = Clock::now() + std::chrono::milliseconds(forever ? 0 : timeout_ms);
  unsigned char len[4];
  if (ReadStatus s = read_exactly(fd, reinterpret_cast<char*>(len), 4, forever, deadline, true); s != ReadStatus::Ok)
    return s;
  const uint32_t n = len[0] | (len[1] << 8) | (len[2] << 16) | (static_cast<uint32_t>(len[3]) << 24);
  if (n == 0 || n > kMaxHeaderBytes) return ReadStatus::Malformed;
  std::string text(n, '\0');
  if (ReadStatus s = read_exactly(fd, text.data(), n, forever, deadline, false); s != ReadStatus::Ok) return s;
  frame.header = nlohmann::json::parse(text, nullptr, false);
  if (!frame.header.is_object()) return ReadStatus::Malformed;
  frame.blob.clear();
  const uint64_t blob = frame.header.value("blob_bytes", uint64_t{0});
  if (blob > kMaxBlobBytes) return ReadStatus::Malformed;
  frame.blob.resize(blob);
  if (blob) return read_exactly(fd, frame.blob.data(), blob, forever, deadline, false);
  return ReadStatus::Ok;
}

}  // namespace ekb::runtime::framed
