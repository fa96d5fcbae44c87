#include "runtime/crash_report.h"

#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <initializer_list>

namespace ekb::runtime {

namespace {

int g_socket = -1;

// Appends the decimal digits of v to buf at *at.
void put_number(char* buf, size_t* at, size_t cap, uint64_t v, bool negative = false) {
  char digits[24];
  int n = 0;
  do digits[n++] = static_cast<char>('0' + v % 10), v /= 10;
  while (v);
  if (negative && *at < cap) buf[(*at)++] = '-';
  while (n && *at < cap) buf[(*at)++] = digits[--n];
}

void put_text(char* buf, size_t* at, size_t cap, const char* s) {
  while (*s && *at < cap) buf[(*at)++] = *s++;
}

void on_fatal_signal(int sig, siginfo_t* info, void*) {
  int saved_errno = errno;
  char buf[160];
  size_t at = 0;
  const size_t cap = sizeof buf;
  put_text(buf, &at, cap, "{\"fatal\":");
  put_number(buf, &at, cap, static_cast<uint64_t>(sig));
  put_text(buf, &at, cap, ",\"addr\":");
  put_number(buf, &at, cap, reinterpret_cast<uintptr_t>(info ? info->si_addr : nullptr));
  put_text(buf, &at, cap, ",\"errno\":");
  put_number(buf, &at, cap, static_cast<uint64_t>(saved_errno));
  put_text(buf, &at, cap, ",\"code\":");
  int code = info ? info->si_code : 0;
  put_number(buf, &at, cap, static_cast<uint64_t>(code < 0 ? -code : code), code < 0);
  put_text(buf, &at, cap, "}");
  if (g_socket >= 0) (void)!::send(g_socket, buf, at, MSG_NOSIGNAL | MSG_DONTWAIT);
  // SA_RESETHAND restored the default action: re-raise so that the process dies of this signal
  // (a fault re-executes the faulting instruction anyway; a raised or sent signal needs this).
  ::raise(sig);
}

}  // namespace

void clear_errno() { errno = 0; }

void install_crash_reporter(int socket_fd) {
  g_socket = socket_fd;
  static char alt_stack[64 * 1024];
  stack_t ss = {};
  ss.ss_sp = alt_stack;
  ss.ss_size = sizeof alt_stack;
  ::sigaltstack(&ss, nullptr);
  struct sigaction sa = {};
  sa.sa_sigaction = on_fatal_signal;
  sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESETHAND;
  sigemptyset(&sa.sa_mask);
  for (int sig : {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT, SIGTRAP, SIGSYS, SIGXFSZ, SIGXCPU})
    ::sigaction(sig, &sa, nullptr);
}

}  // namespace ekb::runtime
