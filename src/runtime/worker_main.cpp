#include "runtime/worker_main.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cstdio>
#include <exception>
#include <memory>
#include <stdexcept>

#include "runtime/crash_report.h"
#include "runtime/kernel_executor.h"
#include "runtime/worker_protocol.h"

namespace ekb::runtime {

namespace {

using nlohmann::json;

class ArenaMapping {
 public:
  ~ArenaMapping() { unmap(); }
  // Maps the whole file inaccessible, then opens up each region: inputs read-only, everything
  // else read-write. The gaps between regions stay PROT_NONE: touching them faults.
  void map(int fd, size_t size, std::vector<ArenaRegion> regions) {
    unmap();
    void* m = ::mmap(nullptr, size, PROT_NONE, MAP_SHARED, fd, 0);
    if (m == MAP_FAILED) throw ExecutorError("cannot map the tensor arena");
    view_.base = static_cast<uint8_t*>(m);
    view_.size = size;
    for (const ArenaRegion& r : regions) {
      if (r.begin > r.end || r.end > size) throw ExecutorError("arena region out of range");
      int prot = PROT_READ | (r.writable ? PROT_WRITE : 0);
      if (::mprotect(view_.base + r.begin, r.end - r.begin, prot) != 0)
        throw ExecutorError("cannot protect an arena region");
    }
    view_.regions = std::move(regions);
  }
  void unmap() {
    if (view_.base) ::munmap(view_.base, view_.size);
    view_ = {};
  }
  const ArenaView& view() const { return view_; }

 private:
  ArenaView view_;
};

json handle(KernelExecutor& exec, ArenaMapping& arena, const json& req, int fd) {
  const std::string op = req.value("op", "");
  if (op == "load") {
    if (fd < 0) throw ExecutorError("load: no artifact descriptor");
    int64_t scratch = exec.load(req.at("slot").get<int>(), fd, req.at("params").get<std::vector<int64_t>>());
    return {{"ok", true}, {"scratch_bytes", scratch}};
  }
  if (op == "attach") {
    if (fd < 0) throw ExecutorError("attach: no arena descriptor");
    std::vector<ArenaRegion> regions;
    for (const auto& r : req.at("regions"))
      regions.push_back({r.at(0).get<uint64_t>(), r.at(1).get<uint64_t>(), r.at(2).get<bool>()});
    try {
      arena.map(fd, req.at("size").get<size_t>(), std::move(regions));
    } catch (...) {
      ::close(fd);
      throw;
    }
    ::close(fd);
    for (const auto& s : req.at("slots")) {
      std::vector<KernelArg> args;
      for (const auto& a : s.at("args")) args.push_back({a.at(0).get<bool>(), a.at(1).get<uint64_t>()});
      exec.attach(arena.view(), s.at("slot").get<int>(), args);
    }
    return {{"ok", true}, {"base", reinterpret_cast<uint64_t>(arena.view().base)}};
  }
  if (fd >= 0) ::close(fd);
  if (op == "run") {
    int64_t ns = exec.run(req.at("slot").get<int>(), req.value("flush", false),
                          req.value("scrub_bytes", size_t{0}));
    return {{"ok", true}, {"ns", ns}};
  }
  if (op == "unload") {
    exec.unload(req.at("slot").get<int>());
    return {{"ok", true}};
  }
  throw ExecutorError("unknown request '" + op + "'");
}

}  // namespace

int worker_main(const WorkerConfig& config) {
  const int sock = config.socket_fd;
  SandboxReport report;
  std::unique_ptr<KernelExecutor> exec;
  try {
    // The executor first: it is trusted code, and a GPU driver initializes only outside the
    // sandbox (cuInit fails with CUDA_ERROR_OPERATING_SYSTEM inside it: seen on the H200). The
    // device stays usable through what it opened; candidate code is loaded only after this.
    // (An OpenCL platform likewise: context and queue here, programs loaded from prebuilt
    // binaries later, with no compiler or linker process: runtime/opencl_executor.h.)
    exec = make_executor(config.backend, config.sandbox.scratch_dir, config.device);
    report = enter_sandbox(config.sandbox);
  } catch (const std::exception& e) {
    protocol::send_message(sock, {{"ready", false}, {"message", e.what()}});
    return 1;
  }
  install_crash_reporter(sock);
  protocol::send_message(sock, {{"ready", true},
                                {"pid", static_cast<int64_t>(::getpid())},
                                {"sandbox",
                                 {{"network_namespace", report.network_namespace},
                                  {"user_namespace", report.user_namespace},
                                  {"private_root", report.private_root},
                                  {"landlock_abi", report.landlock_abi},
                                  {"seccomp", report.seccomp},
                                  {"dropped_privileges", report.dropped_privileges},
                                  {"notes", report.notes}}}});
  ArenaMapping arena;
  for (;;) {
    json req;
    int fd = -1;
    auto status = protocol::receive_message(sock, req, -1, &fd);
    if (status == protocol::ReceiveStatus::Closed) return 0;  // the parent is done with us
    if (status != protocol::ReceiveStatus::Ok) return kWorkerLostConnection;
    if (req.value("op", "") == "quit") {
      if (fd >= 0) ::close(fd);
      protocol::send_message(sock, {{"ok", true}});
      return 0;
    }
    json reply;
    bool must_exit = false;
    try {
      reply = handle(*exec, arena, req, fd);
    } catch (const KernelFault& f) {
      reply = {{"ok", false}, {"message", f.what()}, {"fault", error_kind_name(f.kind)},
               {"offset", f.arena_offset}, {"ends_worker", f.ends_worker}};
      must_exit = f.ends_worker;
    } catch (const std::exception& e) {
      reply = {{"ok", false}, {"message", e.what()}};
    }
    if (!protocol::send_message(sock, reply)) return kWorkerLostConnection;
    if (must_exit) ::_exit(kWorkerDeviceFault);  // no destructors: the device context is unusable
  }
}

}  // namespace ekb::runtime

namespace ekb::runtime {

WorkerConfig parse_worker_arguments(const std::vector<std::string>& args) {
  WorkerConfig c;
  bool have_fd = false;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& name = args[i];
    if (name == "--no-seccomp") {
      c.sandbox.seccomp = false;
      continue;
    }
    if (i + 1 >= args.size()) throw std::invalid_argument("worker: " + name + " needs a value");
    const std::string& value = args[++i];
    auto integer = [&]() -> long long {
      size_t used = 0;
      long long v = 0;
      try {
        v = std::stoll(value, &used);
      } catch (const std::exception&) {
        used = 0;
      }
      if (used != value.size() || value.empty()) throw std::invalid_argument("worker: " + name + " " + value + ": not an integer");
      return v;
    };
    if (name == "--fd") c.socket_fd = static_cast<int>(integer()), have_fd = true;
    else if (name == "--backend") c.backend = ir::target_from_name(value);
    else if (name == "--platform") c.device.platform = value;
    else if (name == "--device") c.device.device = static_cast<int>(integer());
    else if (name == "--scratch") c.sandbox.scratch_dir = value;
    else if (name == "--memory-limit") c.sandbox.memory_limit_bytes = static_cast<uint64_t>(integer());
    else if (name == "--file-limit") c.sandbox.file_size_limit_bytes = static_cast<uint64_t>(integer());
    else if (name == "--parent-pid") c.sandbox.parent_pid = static_cast<pid_t>(integer());
    else if (name == "--uid") c.sandbox.uid = static_cast<int>(integer());
    else if (name == "--gid") c.sandbox.gid = static_cast<int>(integer());
    else throw std::invalid_argument("worker: unknown argument " + name);
  }
  if (!have_fd) throw std::invalid_argument("worker: --fd is required");
  return c;
}

}  // namespace ekb::runtime
