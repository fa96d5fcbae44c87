// One workload's kernels in one sandboxed worker: the baseline and a candidate loaded side by side
// (slots), one shared tensor arena, and the checks made around every single call. The correctness
// trials (eval/correctness.h) are sequences of call()s, the timing loop (eval/timing.h) of
// call_on()s on inputs that have no reference.
//
// Around each call the parent (never the worker: candidate code may have corrupted it) does:
//   before  write the inputs (only when the arena holds others), poison every output
//           (eval/poison.h) and the slot's scratch memory;
//   after   canary bytes around every buffer intact (else OutOfBounds), inputs byte-identical (else
//           InputModified), optionally no output write during a short window after the call
//           returned (else AsyncWrite), outputs within tolerance of the trial's reference (else
//           UnwrittenOutput / Mismatch), or copied for the caller when there is no reference.
// A crash, exit, timeout or memory failure in the worker ends the session: every later call fails.
//
// Two sessions do this: LocalKernelSession, with its worker on this machine, and
// RemoteKernelSession (eval/remote_session.h), whose worker runs on a device behind
// `ekb-device serve`, which does the memory-side checks there while the outputs come back here to
// be compared with the reference. The evaluator picks one through EvalOptions::session.
#pragma once
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "eval/fresh_inputs.h"
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
  virtual ~KernelSession() = default;

  // Loads an artifact into `slot` before bind(). Load errors name the ErrorKind (Load, Crash, ...).
  virtual CallResult load(int slot, const runtime::Artifact& artifact) = 0;
  // Lays out the arena for the loaded slots (with the scratch memory each declares) and maps it.
  virtual CallResult bind() = 0;
  // One checked call of `slot` on `trial`.
  virtual CallResult call(int slot, const Trial& trial, const CallSpec& spec) = 0;

  // Inputs without a reference (the timing loop's fresh sets, eval/fresh_inputs.h): written into
  // the arena for the call_on()s that follow; `inputs` must stay unchanged until the next write.
  virtual void write_inputs(const InputBuffers& inputs) = 0;
  // The set `draw` stands for, derived straight into the arena, its copy kept in `copy` for the
  // input check (one pass over the inputs instead of a derivation and then a copy into the arena);
  // `copy` must stay unchanged until the next write, as with write_inputs.
  virtual void write_fresh_inputs(const FreshInputs& fresh, const FreshInputs::Draw& draw, InputBuffers& copy) = 0;
  // One call on the inputs written last, with every check of call() but the comparison of its
  // outputs, which are copied into *outputs (when given) for the caller to compare with another
  // kernel's.
  virtual CallResult call_on(int slot, const CallSpec& spec, InputBuffers* outputs) = 0;
  // Output `o` of the last call (no copy): valid until the next call or write, and only after a
  // call without an async window (that one compares a snapshot).
  virtual const uint8_t* output_in_arena(size_t o) const = 0;

  virtual bool alive() const = 0;
  // The session's device went away (a RemoteKernelSession's connection broke): its errors say
  // nothing about the kernels, and the evaluation must be done again (ErrorKind::Device).
  virtual bool device_lost() const { return false; }
};

// Every output of `trial` compared with its reference (eval/output_check.h): the first failing
// output's verdict, and the largest errors over all of them.
CallResult compare_with_reference(const KernelInterface& k, const std::vector<const uint8_t*>& outputs,
                                  const Trial& trial, int poison_pattern);

// How the evaluator starts a session for one candidate (empty: a LocalKernelSession). Throws
// std::runtime_error when it cannot, runtime::DeviceLost when the device is gone.
using SessionFactory = std::function<std::unique_ptr<KernelSession>(WorkloadReference&, const SessionOptions&)>;

class LocalKernelSession final : public KernelSession {
 public:
  // Starts a worker (throws std::runtime_error when it cannot).
  LocalKernelSession(WorkloadReference& reference, const SessionOptions& options);
  ~LocalKernelSession() override;

  CallResult load(int slot, const runtime::Artifact& artifact) override;
  CallResult bind() override;
  CallResult call(int slot, const Trial& trial, const CallSpec& spec) override;
  void write_inputs(const InputBuffers& inputs) override;
  void write_fresh_inputs(const FreshInputs& fresh, const FreshInputs::Draw& draw, InputBuffers& copy) override;
  CallResult call_on(int slot, const CallSpec& spec, InputBuffers* outputs) override;
  const uint8_t* output_in_arena(size_t o) const override { return arena_->data(ref_.interface().inputs.size() + o); }

  bool alive() const override { return worker_->alive(); }
  const runtime::Worker& worker() const { return *worker_; }

 private:
  CallResult run(int slot, const CallSpec& spec);
  // Canaries, inputs, the window after the call; then the outputs, compared with `trial`'s
  // reference, or copied into *outputs when there is no trial.
  CallResult check_after_call(int slot, const Trial* trial, const CallSpec& spec, InputBuffers* outputs);

  WorkloadReference& ref_;
  SessionOptions options_;
  std::unique_ptr<runtime::Worker> worker_;
  std::unique_ptr<runtime::TensorArena> arena_;
  std::map<int, int64_t> declared_scratch_;   // slot -> bytes (-1: declares none)
  std::map<int, int> scratch_buffer_;         // slot -> arena buffer index
  const InputBuffers* inputs_in_arena_ = nullptr;
  uint64_t calls_ = 0;
};

}  // namespace ekb::eval
