#include "runtime/subprocess.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <algorithm>
#include <cstring>

namespace ekb::runtime {

namespace {
using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}
}  // namespace

CommandResult run_command(const std::vector<std::string>& argv, const CommandOptions& options) {
  CommandResult r;
  auto t0 = Clock::now();
  if (argv.empty()) {
    r.output = "empty command";
    return r;
  }
  // Everything the child needs is prepared before fork: after fork only async-signal-safe calls.
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  int pipe_fds[2];
  if (::pipe2(pipe_fds, O_CLOEXEC) != 0) {
    r.output = std::string("pipe: ") + std::strerror(errno);
    return r;
  }
  pid_t pid = ::fork();
  if (pid < 0) {
    r.output = std::string("fork: ") + std::strerror(errno);
    ::close(pipe_fds[0]);
    ::close(pipe_fds[1]);
    return r;
  }
  if (pid == 0) {
    ::setpgid(0, 0);  // its own group, so a timeout kills the compiler's children too
    ::dup2(pipe_fds[1], 1);
    ::dup2(pipe_fds[1], 2);
    int devnull = ::open("/dev/null", O_RDONLY);
    if (devnull >= 0) ::dup2(devnull, 0);
    // Nothing else of ours leaks in: a GPU driver loaded here keeps device files open, and the
    // NVIDIA OpenCL platform then failed to load in the child (an `ekb opencl-compile`).
    ::syscall(SYS_close_range, 3u, ~0u, 0u);
    if (!options.cwd.empty() && ::chdir(options.cwd.c_str()) != 0) ::_exit(126);
    if (options.memory_limit_bytes) {
      struct rlimit rl = {options.memory_limit_bytes, options.memory_limit_bytes};
      ::setrlimit(RLIMIT_AS, &rl);
    }
    struct rlimit no_core = {0, 0};
    ::setrlimit(RLIMIT_CORE, &no_core);
    ::execvp(args[0], args.data());
    const char msg[] = "exec failed: ";
    (void)!::write(2, msg, sizeof msg - 1);
    (void)!::write(2, args[0], std::strlen(args[0]));
    ::_exit(127);
  }
  ::setpgid(pid, pid);
  ::close(pipe_fds[1]);
  r.started = true;

  const auto deadline = t0 + std::chrono::duration<double>(options.timeout_s);
  char buf[8192];
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) {
      r.timed_out = true;
      ::kill(-pid, SIGKILL);
      ::kill(pid, SIGKILL);
      break;
    }
    struct pollfd p = {pipe_fds[0], POLLIN, 0};
    int n = ::poll(&p, 1, static_cast<int>(std::min<int64_t>(left.count(), 1000)));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) continue;
    ssize_t got = ::read(pipe_fds[0], buf, sizeof buf);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) break;  // EOF: the child (and its children) closed the pipe
    if (options.echo_fd >= 0) (void)!::write(options.echo_fd, buf, got);
    if (r.output.size() < options.max_output)
      r.output.append(buf, std::min<size_t>(got, options.max_output - r.output.size()));
  }
  ::close(pipe_fds[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) r.term_signal = WTERMSIG(status);
  if (r.started && r.exit_code == 127 && r.output.rfind("exec failed", 0) == 0) r.started = false;
  r.seconds = seconds_since(t0);
  return r;
}

}  // namespace ekb::runtime
