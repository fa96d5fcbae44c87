#include "tvm/bridge_server.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

extern char** environ;

namespace ekb::tvm {

namespace {

using Clock = std::chrono::steady_clock;

// One running `python -m ekb_tvm serve`: requests go out and "done" lines come back over one
// socket (a socket rather than pipes so that writing to a dead bridge is an error, not SIGPIPE);
// what it prints goes to an unlinked file, read back when it fails.
class Bridge {
 public:
  static std::unique_ptr<Bridge> start(const BridgeCommand& c, std::string& error);
  ~Bridge() { stop(false); }

  // Sends one request and waits for its reply until `deadline`.
  runtime::CommandResult request(const std::string& line, Clock::time_point deadline);
  bool alive() const { return pid_ > 0; }

 private:
  // Ends the bridge: killed with its process group (MetaSchedule's builders) when `kill_it`, else
  // left to exit on the end of its input.
  void stop(bool kill_it);
  std::string output_since(off_t offset) const;

  pid_t pid_ = -1;
  int socket_ = -1;
  int log_ = -1;
};

std::unique_ptr<Bridge> Bridge::start(const BridgeCommand& c, std::string& error) {
  auto b = std::make_unique<Bridge>();
  char log_path[] = "/tmp/ekb-tvm-bridge-XXXXXX";
  b->log_ = ::mkostemp(log_path, O_CLOEXEC | O_APPEND);
  if (b->log_ < 0) {
    error = std::string("mkstemp: ") + std::strerror(errno);
    return nullptr;
  }
  ::unlink(log_path);
  int sv[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
    error = std::string("socketpair: ") + std::strerror(errno);
    return nullptr;
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, sv[1], 0);
  posix_spawn_file_actions_adddup2(&actions, sv[1], 1);
  posix_spawn_file_actions_adddup2(&actions, b->log_, 2);
  if (!c.bridge_dir.empty()) posix_spawn_file_actions_addchdir_np(&actions, c.bridge_dir.c_str());
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);  // its own group: a kill reaches its children
  posix_spawnattr_setpgroup(&attr, 0);
  std::vector<std::string> args = {c.python, "-m", "ekb_tvm", "serve"};
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  const int rc = ::posix_spawnp(&b->pid_, argv[0], &actions, &attr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  ::close(sv[1]);
  b->socket_ = sv[0];
  if (rc != 0) {
    b->pid_ = -1;
    error = c.python + ": " + std::strerror(rc);
    return nullptr;
  }
  return b;
}

void Bridge::stop(bool kill_it) {
  if (socket_ >= 0) ::close(socket_);
  socket_ = -1;
  if (pid_ > 0 && kill_it) {
    ::kill(-pid_, SIGKILL);
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
  }
  pid_ = -1;
  if (log_ >= 0) ::close(log_);
  log_ = -1;
}

std::string Bridge::output_since(off_t offset) const {
  struct stat st {};
  if (log_ < 0 || ::fstat(log_, &st) != 0 || st.st_size <= offset) return {};
  const off_t keep = 8000;  // the end says what went wrong
  const off_t from = std::max(offset, st.st_size - keep);
  std::string text(static_cast<size_t>(st.st_size - from), '\0');
  const ssize_t n = ::pread(log_, text.data(), text.size(), from);
  text.resize(n > 0 ? static_cast<size_t>(n) : 0);
  return text;
}

runtime::CommandResult Bridge::request(const std::string& line, Clock::time_point deadline) {
  runtime::CommandResult r;
  r.started = true;
  const auto start = Clock::now();
  struct stat st {};
  const off_t log_start = ::fstat(log_, &st) == 0 ? st.st_size : 0;
  bool sent = true;
  for (size_t done = 0; done < line.size();) {
    const ssize_t n = ::send(socket_, line.data() + done, line.size() - done, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      sent = false;
      break;
    }
    done += static_cast<size_t>(n);
  }
  std::string reply;
  while (sent && reply.find('\n') == std::string::npos) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) {
      r.timed_out = true;
      break;
    }
    pollfd p{socket_, POLLIN, 0};
    const int ready = ::poll(&p, 1, static_cast<int>(std::min<long long>(left, 1 << 30)));
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) continue;
    char buf[256];
    const ssize_t n = ::recv(socket_, buf, sizeof buf, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;  // the bridge died
    reply.append(buf, static_cast<size_t>(n));
  }
  r.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  if (reply == "done\n") {
    r.exit_code = 0;
    return r;
  }
  r.output = output_since(log_start);
  if (r.timed_out) {
    stop(true);
    return r;
  }
  // Dead (or speaking out of turn): its exit status says how it ended.
  int status = 0;
  ::kill(-pid_, SIGKILL);
  if (pid_ > 0 && ::waitpid(pid_, &status, 0) == pid_) {
    if (WIFEXITED(status)) r.exit_code = WEXITSTATUS(status) ? WEXITSTATUS(status) : 1;
    if (WIFSIGNALED(status)) r.term_signal = WTERMSIG(status);
  }
  pid_ = -1;
  stop(false);
  if (!reply.empty()) r.output += "\n(unexpected reply: " + reply.substr(0, 200) + ")";
  return r;
}

// Idle bridges, per command; destroyed at exit, when each bridge sees its input end and exits.
struct Pool {
  std::mutex m;
  std::map<std::string, std::vector<std::unique_ptr<Bridge>>> idle;
};

Pool& pool() {
  static Pool p;
  return p;
}

std::string pool_key(const BridgeCommand& c) { return c.python + '\n' + c.bridge_dir; }

}  // namespace

runtime::CommandResult bridge_request(const BridgeCommand& command, const std::string& request_path,
                                      const std::string& result_path, double timeout_s) {
  const auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(timeout_s));
  // Absolute: the bridge runs in its own directory (bridge_dir), not the caller's.
  const std::string line = std::filesystem::absolute(request_path).string() + '\t' +
                           std::filesystem::absolute(result_path).string() + '\n';
  const std::string key = pool_key(command);
  // A reused bridge may have died while idle (killed from outside): one fresh try then.
  for (int attempt = 0;; ++attempt) {
    std::unique_ptr<Bridge> bridge;
    bool reused = false;
    {
      std::lock_guard<std::mutex> lock(pool().m);
      auto& idle = pool().idle[key];
      if (!idle.empty()) {
        bridge = std::move(idle.back());
        idle.pop_back();
        reused = true;
      }
    }
    if (!bridge) {
      std::string error;
      bridge = Bridge::start(command, error);
      if (!bridge) {
        runtime::CommandResult r;
        r.output = error;
        return r;
      }
    }
    runtime::CommandResult r = bridge->request(line, deadline);
    if (r.ok()) {
      std::lock_guard<std::mutex> lock(pool().m);
      pool().idle[key].push_back(std::move(bridge));
      return r;
    }
    if (!(reused && attempt == 0 && !r.timed_out && r.seconds < 1)) return r;
  }
}

}  // namespace ekb::tvm
