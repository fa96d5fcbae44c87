#include "runtime/worker.h"

#include <fcntl.h>
#include <pwd.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <signal.h>
#include <spawn.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <thread>

#include "runtime/paths.h"
#include "runtime/worker_main.h"
#include "runtime/worker_protocol.h"

namespace ekb::runtime {

namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

std::string signal_name(int sig) {
  const char* abbrev = ::sigabbrev_np(sig);
  return abbrev ? std::string("SIG") + abbrev : "signal " + std::to_string(sig);
}

std::string seconds_text(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", s);
  return buf;
}

uid_t nobody_uid(gid_t* gid) {
  if (const struct passwd* pw = ::getpwnam("nobody")) {
    *gid = pw->pw_gid;
    return pw->pw_uid;
  }
  *gid = 65534;
  return 65534;
}

std::string make_scratch_dir() {
  std::string templ = (std::filesystem::temp_directory_path() / "ekb-worker-XXXXXX").string();
  if (!::mkdtemp(templ.data())) throw std::runtime_error(std::string("mkdtemp: ") + std::strerror(errno));
  return templ;
}

// A sealed in-memory copy of the file at `path`, or -1 with errno set. The worker loads artifacts
// from descriptors; a copy, not the cache file itself, because its Landlock ruleset checks a
// reopen through /proc/self/fd against the file's path, which is outside what it may read.
int sealed_copy(const std::string& path) {
  const int in = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (in < 0) return -1;
  // MFD_EXEC (Linux 6.3) keeps it mappable as code where vm.memfd_noexec makes memfds noexec.
  constexpr unsigned kMfdExec = 0x10;
  int out = ::memfd_create("ekb-artifact", MFD_CLOEXEC | MFD_ALLOW_SEALING | kMfdExec);
  if (out < 0 && errno == EINVAL) out = ::memfd_create("ekb-artifact", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  struct stat st;
  bool ok = out >= 0 && ::fstat(in, &st) == 0;
  for (off_t done = 0; ok && done < st.st_size;) {
    const ssize_t n = ::sendfile(out, in, &done, static_cast<size_t>(st.st_size - done));
    ok = n > 0;
  }
  const int saved_errno = errno;
  ::close(in);
  // Executors that read the descriptor (OpenCL and CUDA programs) start at its offset: rewind it.
  if (ok && ::fcntl(out, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL) == 0 &&
      ::lseek(out, 0, SEEK_SET) == 0)
    return out;
  if (out >= 0) ::close(out);
  errno = saved_errno;
  return -1;
}

}  // namespace

Worker::Worker(WorkerOptions options) : options_(std::move(options)) {
  if (options_.executable.empty()) options_.executable = default_worker_executable();
  scratch_dir_ = make_scratch_dir();
  const bool drop = options_.drop_privileges && ::geteuid() == 0;
  gid_t gid = 0;
  uid_t uid = drop ? nobody_uid(&gid) : 0;
  if (drop) {
    (void)!::chown(scratch_dir_.c_str(), uid, gid);
    ::chmod(scratch_dir_.c_str(), 0700);
  }
  std::string log_path = scratch_dir_ + "/worker.log";
  int log_fd = ::open(log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  int null_fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  int sv[2];
  if (log_fd < 0 || null_fd < 0 || ::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0) {
    std::string why = std::strerror(errno);
    if (log_fd >= 0) ::close(log_fd);
    if (null_fd >= 0) ::close(null_fd);
    std::filesystem::remove_all(scratch_dir_);
    throw std::runtime_error("cannot set up a worker: " + why);
  }
  if (drop) (void)!::fchown(log_fd, uid, gid);

  // posix_spawn, not fork: the evaluating process holds hundreds of MB of inputs and reference
  // answers, and fork would copy its page tables and make every later write to them a copy-on-write
  // fault, for a child that execs at once (glibc spawns with CLONE_VM | CLONE_VFORK). The worker
  // arms its own parent-death signal first thing (sandbox.cpp) and exits if `parent` is gone by
  // then.
  const pid_t parent = ::getpid();
  std::vector<std::string> argv_s = {
      options_.executable, "worker", "--fd", "3", "--backend", std::string(ir::target_name(options_.backend)),
      "--scratch", scratch_dir_, "--memory-limit", std::to_string(options_.memory_limit_bytes),
      "--file-limit", std::to_string(options_.file_size_limit_bytes),
      "--parent-pid", std::to_string(parent)};
  if (!options_.device.platform.empty() || options_.device.device != 0)
    argv_s.insert(argv_s.end(),
                  {"--platform", options_.device.platform, "--device", std::to_string(options_.device.device)});
  if (drop) argv_s.insert(argv_s.end(), {"--uid", std::to_string(uid), "--gid", std::to_string(gid)});
  if (!options_.seccomp) argv_s.push_back("--no-seccomp");
  argv_s.insert(argv_s.begin(), options_.exec_prefix.begin(), options_.exec_prefix.end());
  std::vector<char*> argv;
  for (auto& a : argv_s) argv.push_back(a.data());
  argv.push_back(nullptr);

  posix_spawn_file_actions_t actions;
  posix_spawnattr_t attr;
  posix_spawn_file_actions_init(&actions);
  posix_spawnattr_init(&attr);
  posix_spawn_file_actions_adddup2(&actions, null_fd, 0);
  posix_spawn_file_actions_adddup2(&actions, log_fd, 1);
  posix_spawn_file_actions_adddup2(&actions, log_fd, 2);
  posix_spawn_file_actions_adddup2(&actions, sv[1], 3);  // onto itself: clears close-on-exec
  posix_spawn_file_actions_addclosefrom_np(&actions, 4);  // no other descriptor leaks in
  // Its own process group, so that a timeout kills everything it started; no blocked signals.
  sigset_t none;
  sigemptyset(&none);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setpgroup(&attr, 0);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK);
  pid_t pid = -1;
  const int spawn_errno = ::posix_spawn(&pid, argv[0], &actions, &attr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  ::close(sv[1]);
  ::close(log_fd);
  ::close(null_fd);
  if (spawn_errno != 0) {
    ::close(sv[0]);
    std::filesystem::remove_all(scratch_dir_);
    throw std::runtime_error(std::string("cannot start the worker ") + argv_s[0] + ": " + std::strerror(spawn_errno));
  }
  ::setpgid(pid, pid);  // also here, so that no kill can race the child's own setpgid
  pid_ = pid;
  sock_ = sv[0];

  json hello;
  auto st = protocol::receive_message(sock_, hello, static_cast<int>(options_.start_timeout_s * 1000));
  if (st != protocol::ReceiveStatus::Ok || !hello.value("ready", false)) {
    std::string why = st == protocol::ReceiveStatus::Ok ? hello.value("message", "refused")
                      : st == protocol::ReceiveStatus::Timeout ? "no answer within " + seconds_text(options_.start_timeout_s) + " s"
                                                               : "it exited";
    std::string tail = output_tail();
    int ws = 0;
    kill_and_reap(&ws);
    ::close(sock_);
    sock_ = -1;
    std::filesystem::remove_all(scratch_dir_);
    throw std::runtime_error("the worker (" + options_.executable + " worker) did not start: " + why +
                             (tail.empty() ? "" : "; its output: " + tail));
  }
  sandbox_ = hello.value("sandbox", json::object());
}

Worker::~Worker() {
  if (pid_ > 0) {
    protocol::send_message(sock_, {{"op", "quit"}});
    json bye;
    protocol::receive_message(sock_, bye, 200);
    int ws;
    kill_and_reap(&ws);
  }
  if (sock_ >= 0) ::close(sock_);
  std::error_code ec;
  std::filesystem::remove_all(scratch_dir_, ec);
}

void Worker::kill_and_reap(int* wait_status) {
  *wait_status = 0;
  if (pid_ <= 0) return;
  ::kill(-pid_, SIGKILL);
  ::kill(pid_, SIGKILL);
  while (::waitpid(pid_, wait_status, 0) < 0 && errno == EINTR) {
  }
  pid_ = -1;
}

std::string Worker::output_tail(size_t max_bytes) const {
  std::ifstream in(scratch_dir_ + "/worker.log", std::ios::binary);
  if (!in) return "";
  in.seekg(0, std::ios::end);
  std::streamoff size = in.tellg();
  std::streamoff from = size > static_cast<std::streamoff>(max_bytes) ? size - max_bytes : 0;
  in.seekg(from);
  std::string s(static_cast<size_t>(size - from), '\0');
  in.read(s.data(), static_cast<std::streamsize>(s.size()));
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

WorkerStatus Worker::fail(bool timed_out, double timeout_s, const std::string& context) {
  // Give a dying worker a moment to finish dying (and its crash report to arrive), then make sure.
  int ws = 0;
  bool reaped = false;
  if (!timed_out) {
    auto until = Clock::now() + std::chrono::seconds(2);
    while (Clock::now() < until) {
      json m;
      auto st = protocol::receive_message(sock_, m, 20);
      if (st == protocol::ReceiveStatus::Ok && m.contains("fatal")) fatal_report_ = m;
      pid_t r = ::waitpid(pid_, &ws, WNOHANG);
      if (r == pid_) {
        reaped = true;
        pid_ = -1;
        break;
      }
    }
  }
  if (!reaped) kill_and_reap(&ws);
  if (!fatal_report_) {  // a report sent just before death may still be queued
    json m;
    if (protocol::receive_message(sock_, m, 0) == protocol::ReceiveStatus::Ok && m.contains("fatal"))
      fatal_report_ = m;
  }

  WorkerStatus s;
  std::string tail = output_tail();
  auto with_tail = [&](std::string msg) {
    if (!tail.empty()) msg += "; its output ended with: " + tail;
    return msg;
  };
  if (timed_out) {
    s.error = ErrorKind::Timeout;
    s.message = "ran past the time limit of " + seconds_text(timeout_s) + " s" + context + " (killed)";
    return s;
  }
  if (fatal_report_) {
    int sig = fatal_report_->value("fatal", 0);
    int err = fatal_report_->value("errno", 0);
    uint64_t addr = fatal_report_->value("addr", uint64_t{0});
    std::string what = signal_name(sig) + context;
    if ((sig == SIGSEGV || sig == SIGBUS) && arena_ && addr >= arena_base_in_worker_ &&
        addr < arena_base_in_worker_ + arena_->size()) {
      AddressInfo a = arena_->classify(addr - arena_base_in_worker_);
      bool input = a.buffer >= 0 && arena_->placement(a.buffer).spec.role == BufferRole::Input;
      if (a.kind == AddressInfo::Kind::Data && input) {
        s.error = ErrorKind::InputModified;
        s.message = what + ": wrote to input '" + arena_->placement(a.buffer).spec.name + "' at byte " +
                    std::to_string(a.offset) + " (inputs are read-only)";
      } else {
        s.error = ErrorKind::OutOfBounds;
        s.message = what + ": accessed memory " + arena_->describe(a);
      }
      return s;
    }
    if (err == ENOMEM && (sig == SIGSEGV || sig == SIGBUS || sig == SIGABRT)) {
      s.error = ErrorKind::Memory;
      s.message = what + " after an allocation failed (ENOMEM): the worker's memory limit is " +
                  std::to_string(options_.memory_limit_bytes >> 20) + " MiB";
      return s;
    }
    s.error = ErrorKind::Crash;
    if (sig == SIGXFSZ)
      s.message = what + ": wrote a file past the size limit (kernels may not write files or print)";
    else if (sig == SIGSEGV || sig == SIGBUS)
      s.message = with_tail(what + (addr ? ": invalid memory access at address " + std::to_string(addr)
                                         : std::string(": invalid memory access (a null or non-canonical address)")));
    else
      s.message = with_tail(what);
    if (sig == SIGXCPU) s.error = ErrorKind::Timeout;
    return s;
  }
  if (WIFEXITED(ws) && WEXITSTATUS(ws) == kWorkerLostConnection) {
    s.error = ErrorKind::Crash;
    s.message = with_tail("the worker lost its connection to the harness" + context +
                          " (did the candidate close or use its file descriptors?)");
    return s;
  }
  if (WIFEXITED(ws) && WEXITSTATUS(ws) == kWorkerDeviceFault) {
    s.error = ErrorKind::Crash;
    s.message = with_tail("the device context broke" + context + " (a sticky device error)");
    return s;
  }
  if (WIFEXITED(ws)) {
    s.error = ErrorKind::Exit;
    s.message = with_tail("the process exited with status " + std::to_string(WEXITSTATUS(ws)) +
                          context + " (kernels may not call exit)");
    return s;
  }
  if (WIFSIGNALED(ws)) {
    int sig = WTERMSIG(ws);
    s.error = sig == SIGXCPU ? ErrorKind::Timeout : ErrorKind::Crash;
    s.message = with_tail("killed by " + signal_name(sig) + context +
                          (sig == SIGKILL ? " (not by the harness: the system's out-of-memory killer?)" : ""));
    return s;
  }
  s.error = ErrorKind::Crash;
  s.message = with_tail("the worker stopped answering" + context);
  return s;
}

WorkerStatus Worker::request(const json& req, int fd, double timeout_s, json* reply) {
  if (pid_ <= 0) return {ErrorKind::Internal, "the worker is no longer running"};
  const std::string op = req.value("op", std::string());
  const std::string context = op == "run"      ? " during the call"
                              : op == "load"   ? " while loading (static constructors)"
                              : op == "attach" ? " while mapping the buffers"
                                               : " in " + op;
  if (!protocol::send_message(sock_, req, fd)) return fail(false, timeout_s, context);
  const auto deadline = Clock::now() + std::chrono::duration<double>(timeout_s);
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left < 0) left = 0;
    json m;
    auto st = protocol::receive_message(sock_, m, static_cast<int>(left));
    if (st == protocol::ReceiveStatus::Timeout) return fail(true, timeout_s, context);
    if (st != protocol::ReceiveStatus::Ok) {
      if (st == protocol::ReceiveStatus::Malformed) {
        WorkerStatus s = fail(false, timeout_s, context);
        if (s.error == ErrorKind::Crash && !fatal_report_)
          s.message = "the worker sent a malformed reply" + context + " (did the candidate corrupt it?)";
        return s;
      }
      return fail(false, timeout_s, context);
    }
    if (m.contains("fatal")) {  // the crash report; the death itself follows
      fatal_report_ = m;
      return fail(false, timeout_s, context);
    }
    *reply = std::move(m);
    return {};
  }
}

WorkerStatus Worker::load(int slot, const Artifact& artifact, const std::vector<int64_t>& params,
                          double timeout_s, int64_t* scratch_bytes) {
  int fd = sealed_copy(artifact.path);
  if (fd < 0) return {ErrorKind::Internal, "cannot read the artifact " + artifact.path + ": " + std::strerror(errno)};
  json reply;
  WorkerStatus s = request({{"op", "load"}, {"slot", slot}, {"params", params}}, fd, timeout_s, &reply);
  ::close(fd);
  if (!s.ok()) return s;
  if (reply.contains("fault")) return executor_fault(reply);  // e.g. static constructors that reset the device
  if (!reply.value("ok", false)) return {ErrorKind::Load, reply.value("message", std::string("load failed"))};
  *scratch_bytes = reply.value("scratch_bytes", int64_t{-1});
  return {};
}

WorkerStatus Worker::attach(const TensorArena& arena, const std::vector<SlotBinding>& slots, double timeout_s) {
  json regions = json::array();
  for (size_t b = 0; b < arena.num_buffers(); ++b) {
    const BufferPlacement& p = arena.placement(b);
    regions.push_back({p.region_begin, p.region_end, p.spec.role != BufferRole::Input});
  }
  json js = json::array();
  for (const SlotBinding& sb : slots) {
    json args = json::array();
    for (const SlotBinding::Arg& a : sb.args) {
      if (a.buffer >= 0) args.push_back({true, arena.placement(a.buffer).data_offset});
      else args.push_back({false, static_cast<uint64_t>(a.value)});
    }
    js.push_back({{"slot", sb.slot}, {"args", args}});
  }
  arena_ = &arena;
  json reply;
  WorkerStatus s = request({{"op", "attach"}, {"size", arena.size()}, {"regions", regions}, {"slots", js}},
                           arena.fd(), timeout_s, &reply);
  if (!s.ok()) return s;
  if (reply.contains("fault")) return executor_fault(reply);  // e.g. no device memory for the buffers
  if (!reply.value("ok", false)) return {ErrorKind::Internal, "attach: " + reply.value("message", std::string())};
  arena_base_in_worker_ = reply.value("base", uint64_t{0});
  return {};
}

WorkerStatus Worker::run(int slot, bool flush, size_t scrub_bytes, double timeout_s, int64_t* ns) {
  json reply;
  const auto t0 = Clock::now();
  WorkerStatus s = request({{"op", "run"}, {"slot", slot}, {"flush", flush}, {"scrub_bytes", scrub_bytes}},
                           -1, timeout_s, &reply);
  const int64_t round_trip =
      std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - t0).count();
  if (!s.ok()) return s;
  if (reply.contains("fault")) return executor_fault(reply);
  if (!reply.value("ok", false)) return {ErrorKind::Internal, "run: " + reply.value("message", std::string())};
  *ns = reply.value("ns", int64_t{-1});
  // The worker measures; a value it could not have measured means the candidate tampered with it.
  if (*ns < 0 || *ns > round_trip) {
    int ws;
    kill_and_reap(&ws);
    return {ErrorKind::Crash, "the worker reported an impossible duration (" + std::to_string(*ns) +
                                  " ns in a " + std::to_string(round_trip) + " ns round trip)"};
  }
  return {};
}

WorkerStatus Worker::executor_fault(const json& reply) {
  WorkerStatus s;
  s.error = parse_error_kind(reply.value("fault", std::string())).value_or(ErrorKind::Crash);
  s.message = reply.value("message", std::string("fault"));
  const int64_t offset = reply.value("offset", int64_t{-1});
  if (offset >= 0 && arena_ && s.error != ErrorKind::OutOfBounds) {
    s.message += ": " + arena_->describe(arena_->classify(static_cast<uint64_t>(offset)));
  } else if (offset >= 0 && arena_) {
    // Named like a CPU fault address: a write inside an input's data modified it, anything else
    // (canary bytes, guard gaps) was out of bounds.
    AddressInfo a = arena_->classify(static_cast<uint64_t>(offset));
    bool input = a.buffer >= 0 && arena_->placement(a.buffer).spec.role == BufferRole::Input;
    if (a.kind == AddressInfo::Kind::Data && input) {
      s.error = ErrorKind::InputModified;
      s.message = "wrote to input '" + arena_->placement(a.buffer).spec.name + "' at byte " + std::to_string(a.offset) +
                  " (inputs are read-only)";
    } else {
      s.error = ErrorKind::OutOfBounds;
      s.message = "wrote memory " + arena_->describe(a);
    }
  }
  if (reply.value("ends_worker", false)) {
    int ws;
    kill_and_reap(&ws);  // it exits by itself; the session must start a new one
  }
  return s;
}

WorkerStatus Worker::unload(int slot, double timeout_s) {
  json reply;
  WorkerStatus s = request({{"op", "unload"}, {"slot", slot}}, -1, timeout_s, &reply);
  if (!s.ok()) return s;
  if (!reply.value("ok", false)) return {ErrorKind::Internal, "unload: " + reply.value("message", std::string())};
  return {};
}

}  // namespace ekb::runtime
