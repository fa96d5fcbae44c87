// Frames on a byte stream: what `ekb-device serve` and the host speak over ssh's stdin/stdout or a
// local pipe (docs/DEVICES.md, "The serve protocol"). The worker protocol (worker_protocol.h) needs
// a socket that keeps message boundaries and passes descriptors; a stream through ssh has neither,
// hence the framing:
//
//   u32 little-endian length of the header | the header, a JSON object | "blob_bytes" raw bytes
//
// The blob (an artifact, a trial's inputs, a call's outputs) travels as bytes, not inside JSON.
#pragma once
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace ekb::runtime::framed {

// The version of the requests spoken in frames (`ekb-device serve`, docs/DEVICES.md): its `hello`
// says it, and the host refuses another.
constexpr int kServeProtocol = 1;

constexpr uint32_t kMaxHeaderBytes = 16u << 20;
constexpr uint64_t kMaxBlobBytes = 4ull << 30;

struct Frame {
  nlohmann::json header;
  std::string blob;
};

// Writes one frame (sets header["blob_bytes"] when `blob` is not empty). False when the peer is
// gone or the descriptor failed; never raises SIGPIPE on a socket (MSG_NOSIGNAL), while a caller
// writing to a pipe must ignore SIGPIPE itself.
bool write_frame(int fd, nlohmann::json header, std::string_view blob = {});

enum class ReadStatus { Ok, Closed, Timeout, Malformed, Error };
std::string_view read_status_name(ReadStatus s);  // "closed", "timed out", ...

// Reads one frame, waiting at most `timeout_ms` in all (< 0: forever). Closed: end of stream
// before the frame's first byte; a stream that ends inside a frame is Malformed.
ReadStatus read_frame(int fd, Frame& frame, int timeout_ms);

}  // namespace ekb::runtime::framed
