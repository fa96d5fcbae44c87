// The parent's handle on one sandboxed worker process (the only place candidate code runs).
//
// Started by fork + exec of `ekb worker` (runtime/worker_main.h) with a SOCK_SEQPACKET socketpair;
// tensors live in a shared arena (runtime/tensor_arena.h). Every request has a wall-clock deadline
// enforced here: past it, the worker's process group is killed. When a request fails because the
// worker died (crash, abort, exit() inside a kernel, time limit, memory limit), the WorkerStatus
// says which ErrorKind that is and why; the worker is then dead and a new one must be started.
//
// Caveat: the parent-death signal that stops an orphaned worker is tied to the thread that started
// it; start and use a Worker from a thread that outlives it.
#pragma once
#include <sys/types.h>

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "runtime/backend.h"
#include "runtime/error_kind.h"
#include "runtime/tensor_arena.h"

namespace ekb::runtime {

struct WorkerOptions {
  ir::Target backend = ir::Target::Cpu;       // whose executor runs the kernels
  DeviceSelection device;                     // the backend's worker_device(), passed on its command line
  std::string executable;                     // empty: default_worker_executable()
  std::vector<std::string> exec_prefix;       // run as prefix + executable ... (an emulator: qemu-user)
  uint64_t memory_limit_bytes = 8ull << 30;   // address space of the whole worker
  uint64_t file_size_limit_bytes = 1 << 20;
  double start_timeout_s = 20;
  bool drop_privileges = true;                // when running as root: the worker runs as nobody
  bool seccomp = true;
};

// ok(), or why the request failed; error uses the results vocabulary (runtime/error_kind.h).
struct WorkerStatus {
  ErrorKind error = ErrorKind::None;
  std::string message;
  bool ok() const { return error == ErrorKind::None; }
};

// Arguments of one loaded slot: buffers of the arena (by index) and int64 parameters, in ABI order.
struct SlotBinding {
  int slot = 0;
  struct Arg {
    int buffer = -1;    // >= 0: pointer to that arena buffer's data
    int64_t value = 0;  // otherwise: this integer
  };
  std::vector<Arg> args;
};

class Worker {
 public:
  // Starts a worker and waits for it to confine itself. Throws std::runtime_error if it cannot.
  explicit Worker(WorkerOptions options);
  ~Worker();  // asks it to quit, kills it if it does not, removes its scratch directory
  Worker(const Worker&) = delete;
  Worker& operator=(const Worker&) = delete;

  // Loads an artifact into `slot` (running its static constructors). *scratch_bytes: what its
  // ekb_scratch_bytes(params) declares, -1 if none. A refusal (no ekb_main, dlopen error) is Load.
  WorkerStatus load(int slot, const Artifact& artifact, const std::vector<int64_t>& params,
                    double timeout_s, int64_t* scratch_bytes);
  // Maps `arena` in the worker (inputs read-only) and binds the slots' arguments to it. The arena
  // must outlive the worker's use of it; fault addresses are classified against it.
  WorkerStatus attach(const TensorArena& arena, const std::vector<SlotBinding>& slots, double timeout_s);
  // One call of the slot's kernel; *ns: its duration measured in the worker.
  WorkerStatus run(int slot, bool flush, size_t scrub_bytes, double timeout_s, int64_t* ns);
  WorkerStatus unload(int slot, double timeout_s);

  bool alive() const { return pid_ > 0; }
  pid_t pid() const { return pid_; }
  // What confinement the worker achieved (runtime/sandbox.h): {"network_namespace", "user_namespace",
  // "private_root", "landlock_abi", "seccomp", "dropped_privileges", "notes"}.
  const nlohmann::json& sandbox() const { return sandbox_; }
  // The last bytes the worker wrote to stdout/stderr (a kernel's assert message, say).
  std::string output_tail(size_t max_bytes = 400) const;

 private:
  WorkerStatus request(const nlohmann::json& req, int fd, double timeout_s, nlohmann::json* reply);
  // The worker is gone or must go: kill it, reap it, and say why it failed.
  WorkerStatus fail(bool timed_out, double timeout_s, const std::string& context);
  // A fault the executor detected and replied with (runtime::KernelFault).
  WorkerStatus executor_fault(const nlohmann::json& reply);
  void kill_and_reap(int* wait_status);

  WorkerOptions options_;
  pid_t pid_ = -1;
  int sock_ = -1;
  std::string scratch_dir_;
  nlohmann::json sandbox_;
  std::optional<nlohmann::json> fatal_report_;  // the crash handler's message, if one arrived
  const TensorArena* arena_ = nullptr;
  uint64_t arena_base_in_worker_ = 0;
};

}  // namespace ekb::runtime
