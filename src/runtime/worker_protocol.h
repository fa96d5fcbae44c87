// The wire between the parent and a worker: a SOCK_SEQPACKET socketpair carrying one JSON object
// per message (packets keep message boundaries, so no framing), optionally with one file
// descriptor attached (SCM_RIGHTS: the tensor arena's memfd, an artifact to load).
//
// Requests (parent -> worker), each answered by exactly one reply {"ok": true, ...} or
// {"ok": false, "message": "..."}:
//   {"op": "load",   "slot": S, "params": [...]}            + fd of the artifact  -> {"scratch_bytes": N}  (-1: none declared)
//   {"op": "attach", "size": N, "regions": [[begin, end, writable], ...],
//    "slots": [{"slot": S, "args": [[is_pointer, value], ...]}, ...]} + fd of the arena  -> {"base": address}
//   {"op": "run",    "slot": S, "flush": bool, "scrub_bytes": N}                  -> {"ns": elapsed}
//       or, for a fault the executor detected: {"ok": false, "fault": KIND, "offset": O, "ends_worker": B}
//   {"op": "unload", "slot": S}
//   {"op": "quit"}
// Unsolicited (worker -> parent):
//   {"ready": true, "pid": P, "sandbox": {...}}     once, after the worker has confined itself
//   {"fatal": SIGNAL, "addr": A, "errno": E, "code": C}   from the crash handler, just before dying
#pragma once
#include <nlohmann/json.hpp>

namespace ekb::runtime::protocol {

constexpr size_t kMaxMessageBytes = 1 << 20;

// False when the peer is gone (never raises SIGPIPE). `fd_to_pass` < 0: none.
bool send_message(int sock, const nlohmann::json& message, int fd_to_pass = -1);

enum class ReceiveStatus { Ok, Closed, Timeout, Malformed, Error };

// Waits at most `timeout_ms` (< 0: forever) for one message. A received descriptor is stored in
// *received_fd (close-on-exec) when that pointer is given, and closed otherwise.
ReceiveStatus receive_message(int sock, nlohmann::json& message, int timeout_ms,
                              int* received_fd = nullptr);

}  // namespace ekb::runtime::protocol
