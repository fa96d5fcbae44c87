// The backend-specific half of a worker: how an artifact is loaded and a kernel called. It runs
// inside the sandboxed worker process (runtime/worker_main.cpp owns the socket and the shared
// arena mapping and forwards requests here). `cpu` dlopens a shared object and calls ekb_main on
// the arena's memory directly; a `cuda` executor will mirror the arena in device memory, copy
// inputs in before and outputs out after each call, and time with events.
#pragma once
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "ir/target.h"
#include "runtime/device_selection.h"
#include "runtime/error_kind.h"

namespace ekb::runtime {

// The shared arena as mapped in the worker (runtime/tensor_arena.h describes the layout).
struct ArenaRegion {
  uint64_t begin = 0, end = 0;  // offsets
  bool writable = false;
};
struct ArenaView {
  uint8_t* base = nullptr;
  size_t size = 0;
  std::vector<ArenaRegion> regions;
};

// One argument of ekb_main: a buffer (offset into the arena) or an int64 parameter.
struct KernelArg {
  bool is_pointer = false;
  uint64_t value = 0;
};

// A load or call the executor refuses (no ekb_main, dlopen error, ...): reported as ErrorKind::Load.
class ExecutorError : public std::runtime_error {
  using std::runtime_error::runtime_error;
};

// A fault of the candidate that the executor itself detects (a GPU executor checks device memory
// after the call; a CPU kernel's faults are signals instead). The parent reports it as `kind`; with
// `arena_offset` >= 0 (the first damaged byte) it names the buffer, as for a CPU fault address.
// `ends_worker`: the process cannot go on (a sticky device error) and exits after replying.
class KernelFault : public ExecutorError {
 public:
  KernelFault(ErrorKind kind, const std::string& message, int64_t arena_offset = -1, bool ends_worker = false)
      : ExecutorError(message), kind(kind), arena_offset(arena_offset), ends_worker(ends_worker) {}
  ErrorKind kind;
  int64_t arena_offset;
  bool ends_worker;
};

class KernelExecutor {
 public:
  virtual ~KernelExecutor() = default;
  // Loads the artifact open on `artifact_fd` (the executor takes the descriptor) into `slot`.
  // Returns the bytes of scratch memory its ekb_scratch_bytes(params) declares, or -1 if it
  // declares none.
  virtual int64_t load(int slot, int artifact_fd, const std::vector<int64_t>& params) = 0;
  // Binds `slot`'s arguments to the arena (replacing an earlier binding).
  virtual void attach(const ArenaView& arena, int slot, const std::vector<KernelArg>& args) = 0;
  // One call of the slot's kernel; returns its duration in nanoseconds. With `flush`, the
  // kernel's buffers are evicted from the caches first (outside the measured interval).
  virtual int64_t run(int slot, bool flush, size_t scrub_bytes) = 0;
  virtual void unload(int slot) = 0;
};

// The executor of a target's backend; throws ExecutorError for one that cannot run here (no CUDA
// device, no OpenCL platform). `private_dir` is the worker's own scratch directory (a driver's
// kernel cache may go there); `device` the one the backend chose.
std::unique_ptr<KernelExecutor> make_executor(ir::Target target, const std::string& private_dir = "",
                                              const DeviceSelection& device = {});

}  // namespace ekb::runtime
