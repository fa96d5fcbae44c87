// One workload's kernels in one sandboxed worker: the baseline and a candidate loaded side by side
// (slots), one shared tensor arena, and the checks made around every single call. The correctness
// trials (eval/correctness.h) and the timing loop (eval/timing.h) are sequences of call()s.
//
// Around each call the parent (never the worker: candidate code may have corrupted it) does:
//   before  write the trial's inputs (only when the arena holds another trial's), poison every
//           output (eval/poison.h) and the slot's scratch memory;
//   after   canary bytes around every buffer intact (else OutOfBounds), inputs byte-identical (else
//           InputModified), optionally no output write during a short window after the call
//           returned (else AsyncWrite), outputs equal to the answer this slot gave on the same
//           trial before (byte-exact, fast) or else within tolerance of the reference (else
//           UnwrittenOutput / Mismatch).
// A crash, exit, timeout or memory failure in the worker ends the session: every later call fails.
#pragma once
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "eval/result.h"
#include "eval/workload_reference.h"
#include "runtime/tensor_arena.h"
#include "runtime/worker.h"

namespace ekb::eval {

struct SessionOptions {
  runtime::WorkerOptions worker;
  double call_timeout_s = 10;  // per call of a kernel (also its loading: static constructors)
};

struct CallSpec {
  int poison_pattern = 0;
  bool flush = false;            // evict the kernel's buffers from the caches before the call
  size_t scrub_bytes = 0;        // also stream this many bytes through the caches before it
  double async_window_ms = 0;    // > 0: watch the outputs this long after the call returned
  bool remember_outputs = false; // keep these outputs as the slot's verified answer for the trial
};

struct CallResult {
  ErrorKind error = ErrorKind::None;
  std::string message;
  double ms = 0;             // the call's duration, measured in the worker
  double max_abs_error = 0;  // of the outputs, when compared with the reference
  double max_error_ratio = 0;  // the worst element's |error| / allowed error (OutputVerdict)
  bool ok() const { return error == ErrorKind::None; }
};

class KernelSession {
 public:
  // Starts a worker (throws std::runtime_error when it cannot).
  KernelSession(WorkloadReference& reference, const SessionOptions& options);
  ~KernelSession();

  // Loads an artifact into `slot` before bind(). Load errors name the ErrorKind (Load, Crash, ...).
  CallResult load(int slot, const runtime::Artifact& artifact);
  // Lays out the arena for the loaded slots (with the scratch memory each declares) and maps it.
  CallResult bind();
  // One checked call of `slot` on `trial`.
  CallResult call(int slot, const Trial& trial, const CallSpec& spec);

  bool alive() const { return worker_->alive(); }
  const runtime::Worker& worker() const { return *worker_; }

 private:
  void write_inputs(const Trial& trial);
  CallResult check_after_call(int slot, const Trial& trial, const CallSpec& spec);

  WorkloadReference& ref_;
  SessionOptions options_;
  std::unique_ptr<runtime::Worker> worker_;
  std::unique_ptr<runtime::TensorArena> arena_;
  std::map<int, int64_t> declared_scratch_;   // slot -> bytes (-1: declares none)
  std::map<int, int> scratch_buffer_;         // slot -> arena buffer index
  const Trial* inputs_in_arena_ = nullptr;
  std::map<std::pair<int, const Trial*>, std::vector<std::vector<uint8_t>>> verified_;
  uint64_t calls_ = 0;
};

}  // namespace ekb::eval
