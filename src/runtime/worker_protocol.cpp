#include "runtime/worker_protocol.h"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

namespace ekb::runtime::protocol {

bool send_message(int sock, const nlohmann::json& message, int fd_to_pass) {
  std::string text = message.dump();
  struct iovec iov = {text.data(), text.size()};
  struct msghdr msg = {};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  alignas(struct cmsghdr) char control[CMSG_SPACE(sizeof(int))];
  if (fd_to_pass >= 0) {
    std::memset(control, 0, sizeof control);
    msg.msg_control = control;
    msg.msg_controllen = sizeof control;
    struct cmsghdr* c = CMSG_FIRSTHDR(&msg);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int));
    std::memcpy(CMSG_DATA(c), &fd_to_pass, sizeof(int));
  }
  for (;;) {
    ssize_t n = ::sendmsg(sock, &msg, MSG_NOSIGNAL);
    if (n >= 0) return static_cast<size_t>(n) == text.size();
    if (errno != EINTR) return false;
  }
}

ReceiveStatus receive_message(int sock, nlohmann::json& message, int timeout_ms, int* received_fd) {
  if (received_fd) *received_fd = -1;
  if (timeout_ms >= 0) {
    struct pollfd p = {sock, POLLIN, 0};
    int n;
    do n = ::poll(&p, 1, timeout_ms);
    while (n < 0 && errno == EINTR);
    if (n == 0) return ReceiveStatus::Timeout;
    if (n < 0) return ReceiveStatus::Error;
  }
  static thread_local std::vector<char> buffer(kMaxMessageBytes);
  struct iovec iov = {buffer.data(), buffer.size()};
  struct msghdr msg = {};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  alignas(struct cmsghdr) char control[CMSG_SPACE(sizeof(int) * 4)];
  msg.msg_control = control;
  msg.msg_controllen = sizeof control;
  ssize_t n;
  do n = ::recvmsg(sock, &msg, MSG_CMSG_CLOEXEC);
  while (n < 0 && errno == EINTR);
  if (n < 0) return errno == ECONNRESET ? ReceiveStatus::Closed : ReceiveStatus::Error;
  for (struct cmsghdr* c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
    if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
    size_t count = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
    for (size_t k = 0; k < count; ++k) {
      int fd;
      std::memcpy(&fd, CMSG_DATA(c) + k * sizeof(int), sizeof fd);
      if (received_fd && *received_fd < 0) *received_fd = fd;
      else ::close(fd);
    }
  }
  if (n == 0) return ReceiveStatus::Closed;
  if (msg.msg_flags & MSG_TRUNC) return ReceiveStatus::Malformed;
  message = nlohmann::json::parse(buffer.data(), buffer.data() + n, nullptr, false);
  if (message.is_discarded() || !message.is_object()) return ReceiveStatus::Malformed;
  return ReceiveStatus::Ok;
}

}  // namespace ekb::runtime::protocol
