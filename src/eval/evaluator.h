// Evaluating one candidate solution of one workload against the baseline (docs/EVALUATION.md): the single
// entry point the CLI, the agent and the tests use.
//
//   compile both (cached)  ->  start a sandboxed worker  ->  check the baseline  ->  load the
//   candidate  ->  correctness trials  ->  interleaved timing  ->  re-check on fresh inputs
//
// Every evaluation gets a fresh worker: nothing a candidate did to its process (threads, signal
// handlers, overwritten memory) can reach the next candidate, and a dead worker needs no special
// handling. The baseline is re-checked in each worker before the candidate is loaded (cheap: a
// few calls): the timing loop compares the candidate's timed outputs with the baseline's.
#pragma once
#include <cstdint>
#include <string>

#include "eval/result.h"
#include "eval/timing.h"
#include "eval/workload_reference.h"
#include "runtime/backend.h"

namespace ekb::eval {

struct EvalOptions {
  // Correctness.
  int trials = 3;                // random-input trials before timing (each a fresh seed)
  bool edge_trial = true;        // plus one with inputs at their domain bounds, where there are any
  bool branch_trials = true;     // plus those derived from the compute layer (branch_trials.h), where it has their construct
  int recheck_trials = 1;        // random-input trials after timing, on seeds not used before
  double async_window_ms = 5;    // how long outputs are watched after each trial's call returned
  double call_timeout_s = 10;    // per kernel call (and per load)
  // Timing. timing.flush is ignored: caches are flushed unless the workload is tagged `warm`.
  bool time = true;
  TimingOptions timing;
  // The worker.
  uint64_t memory_limit_bytes = 0;  // address space; 0: 4 GiB plus room for the tensors and threads
  uint64_t file_size_limit_bytes = 1 << 20;
  std::string worker_executable;    // empty: runtime::default_worker_executable()
  bool drop_privileges = true;      // run the worker as `nobody` when ekb runs as root
  // Where the kernels run: empty, a worker here (LocalKernelSession); or a remote device's
  // (eval/remote_session.h). A device lost mid-evaluation makes the result ErrorKind::Device.
  SessionFactory session;
  // Identity in the result.
  std::string solution;             // empty: the candidate's origin
  int sample = 0;
};

// The factor by which a kernel call's time limit grows where the backend's kernels run under an
// emulator (DeviceInfo::emulated).
inline constexpr double kEmulatedCallTimeoutScale = 20;

// Never throws for anything a candidate does; a harness failure (the baseline does not compile,
// no worker can start) is reported as ErrorKind::Internal, a device lost on the way as
// ErrorKind::Device (whatever else failed with it: nothing of such a result is the candidate's).
CandidateResult evaluate(runtime::Backend& backend, WorkloadReference& workload,
                         const runtime::Source& candidate, const runtime::Source& baseline,
                         const EvalOptions& options = {});

}  // namespace ekb::eval
