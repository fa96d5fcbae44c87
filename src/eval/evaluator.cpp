#include "eval/evaluator.h"

#include <chrono>
#include <ctime>
#include <memory>
#include <thread>

#include "eval/correctness.h"
#include "eval/cpu_steal.h"
#include "eval/kernel_session.h"
#include "runtime/device_link.h"

namespace ekb::eval {

namespace {

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// CPU time of the calling thread (its own work, not the worker's nor time spent waiting).
double thread_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

constexpr int kBaselineSlot = 0;
constexpr int kCandidateSlot = 1;

// RLIMIT_AS counts address space, not memory in use: the tensor arena is mapped in the worker, and
// every thread an OpenMP kernel starts reserves a stack and, once it mallocs, a 64 MiB glibc heap.
// So: 4 GiB for the kernel, the tensors three times over, and 96 MiB per hardware thread.
uint64_t default_memory_limit(const KernelInterface& k) {
  const uint64_t threads = std::max(1u, std::thread::hardware_concurrency());
  return (4ull << 30) + 3 * k.tensor_bytes() + threads * (96ull << 20);
}

}  // namespace

CandidateResult evaluate(runtime::Backend& backend, WorkloadReference& workload,
                         const runtime::Source& candidate, const runtime::Source& baseline,
                         const EvalOptions& options) {
  const ir::Instance& inst = workload.instance();
  CandidateResult r;
  r.task = inst.pattern().name;
  r.workload = inst.full_name();
  r.backend = std::string(backend.name());
  r.solution = options.solution.empty() ? candidate.origin : options.solution;
  r.sample = options.sample;
  std::unique_ptr<KernelSession> session;
  auto fail = [&r, &session](ErrorKind kind, std::string message) {
    if (session && session->device_lost() && kind != ErrorKind::Device) {
      kind = ErrorKind::Device;
      message = "the device was lost: " + message;
    }
    r.error = kind;
    r.message = std::move(message);
    return r;
  };

  // ---- compile ----
  runtime::CompileOutcome base_build, cand_build;
  try {
    base_build = backend.compile(baseline);
    cand_build = backend.compile(candidate);
  } catch (const std::exception& e) {
    return fail(ErrorKind::Internal, std::string("the toolchain failed: ") + e.what());
  }
  r.cost.compile_s = cand_build.seconds;
  r.cost.compile_cached = cand_build.cached;
  if (!base_build.ok) return fail(ErrorKind::Internal, "the baseline does not compile: " + base_build.message);
  if (!cand_build.ok) return fail(ErrorKind::Compile, cand_build.message);
  r.compiled = true;

  // ---- reference trials ----
  const auto t_check = Clock::now();
  const int n_trials = std::max(1, options.trials);
  workload.prepare(n_trials + (options.time ? options.recheck_trials : 0), options.edge_trial, options.branch_trials);
  std::vector<const Trial*> random_trials, recheck_trials;
  for (int k = 0; k < n_trials; ++k) random_trials.push_back(&workload.random_trial(k));
  if (options.time)
    for (int k = 0; k < options.recheck_trials; ++k) recheck_trials.push_back(&workload.random_trial(n_trials + k));
  for (const Trial* t : random_trials)
    if (!t->reference_error.empty()) return fail(ErrorKind::Internal, "the reference failed on " + t->label + ": " + t->reference_error);
  for (const Trial* t : recheck_trials)
    if (!t->reference_error.empty()) return fail(ErrorKind::Internal, "the reference failed on " + t->label + ": " + t->reference_error);
  // Trials aimed at the ends of domains and at the compute layer's data-dependent branches.
  std::vector<const Trial*> targeted;
  if (const Trial* edge = options.edge_trial ? workload.edge_trial() : nullptr) targeted.push_back(edge);
  if (options.branch_trials)
    for (int k = 0; k < workload.branch_trial_count(); ++k)
      if (const Trial* t = workload.branch_trial(k)) targeted.push_back(t);

  // ---- the worker, with the baseline checked before any candidate code is loaded ----
  SessionOptions so;
  // An emulator runs a kernel tens of times slower, on one thread (qemu-user measured 2-30x on the
  // suite): the same call limit would call a slow emulation a hang.
  so.call_timeout_s = options.call_timeout_s * (backend.device_info().emulated ? kEmulatedCallTimeoutScale : 1);
  so.worker.backend = backend.target();
  so.worker.device = backend.worker_device();
  // A cross-compiled cpu target's kernels run in that target's worker, under its emulator.
  const runtime::WorkerLaunch launch = backend.worker_launch();
  so.worker.executable = launch.executable.empty() ? options.worker_executable : launch.executable;
  so.worker.exec_prefix = launch.prefix;
  so.worker.memory_limit_bytes = backend.worker_address_space_limit(
      options.memory_limit_bytes ? options.memory_limit_bytes : default_memory_limit(workload.interface()));
  so.worker.file_size_limit_bytes = options.file_size_limit_bytes;
  so.worker.drop_privileges = options.drop_privileges;
  try {
    session = options.session ? options.session(workload, so) : std::make_unique<LocalKernelSession>(workload, so);
  } catch (const runtime::DeviceLost& e) {
    return fail(ErrorKind::Device, e.what());
  } catch (const std::exception& e) {
    return fail(ErrorKind::Internal, e.what());
  }
  auto finish_check = [&] { r.cost.check_s += seconds_since(t_check); };

  CallResult c = session->load(kBaselineSlot, *base_build.artifact);
  if (c.ok()) c = session->bind();
  if (!c.ok()) {
    finish_check();
    return fail(ErrorKind::Internal, "the baseline does not load: " + c.message);
  }
  // The random trials are the ground of the timing loop's fresh inputs, where the candidate is
  // compared with the baseline: the baseline must pass them all (a few calls).
  CheckOutcome bc = check_trials(*session, kBaselineSlot, random_trials, 0);
  if (!bc.ok()) {
    finish_check();
    return fail(ErrorKind::Internal, "the baseline fails its own check: " + bc.message);
  }
  std::vector<const Trial*> trials = random_trials;
  for (const Trial* t : targeted) {
    // Targeted inputs are only fair where the baseline itself is within tolerance on them.
    CheckOutcome be = check_trials(*session, kBaselineSlot, {t}, 0);
    if (!session->alive()) {
      finish_check();
      return fail(ErrorKind::Internal, "the baseline failed on " + t->label + ": " + be.message);
    }
    if (be.ok()) trials.push_back(t);
  }

  // ---- the candidate: load, correctness ----
  c = session->load(kCandidateSlot, *cand_build.artifact);
  if (c.ok()) c = session->bind();
  if (!c.ok()) {
    finish_check();
    return fail(c.error, "while loading: " + c.message);
  }
  CheckOutcome cc = check_trials(*session, kCandidateSlot, trials, options.async_window_ms);
  r.max_abs_error = cc.max_abs_error;
  r.max_error_ratio = cc.max_error_ratio;
  finish_check();
  if (!cc.ok()) return fail(cc.error, cc.message);
  if (!options.time) {
    r.correct = true;
    return r;
  }

  // ---- timing, interleaved with the baseline ----
  const auto t_time = Clock::now();
  const double cpu_time = thread_cpu_seconds();
  TimingOptions to = options.timing;
  to.flush = !inst.workload->has_tag("warm");
  FreshInputs fresh(workload, random_trials);
  const StealMeter steal;
  TimingOutcome tt = time_interleaved(*session, workload, kBaselineSlot, kCandidateSlot, fresh, to);
  r.cost.time_s = seconds_since(t_time);
  r.cost.time_cpu_s = thread_cpu_seconds() - cpu_time;
  r.cpu_steal = steal.fraction();
  if (!tt.ok()) {
    if (tt.baseline_failed) return fail(ErrorKind::Internal, "the baseline failed while being timed: " + tt.message);
    return fail(tt.error, tt.message);
  }

  // ---- re-check on inputs this candidate has never seen ----
  const auto t_recheck = Clock::now();
  CheckOutcome rc = check_trials(*session, kCandidateSlot, recheck_trials, options.async_window_ms,
                                 static_cast<int>(trials.size()));
  r.cost.check_s += seconds_since(t_recheck);
  r.max_abs_error = std::max(r.max_abs_error, rc.max_abs_error);
  r.max_error_ratio = std::max(*r.max_error_ratio, rc.max_error_ratio);
  if (!rc.ok()) return fail(rc.error, "after timing, " + rc.message);

  r.correct = true;
  r.time = tt.candidate;
  r.baseline = tt.baseline;
  if (tt.speedup.estimate > 0) {
    r.speedup = tt.speedup.estimate;
    r.speedup_low = tt.speedup.low;
    r.speedup_high = tt.speedup.high;
  }
  return r;
}

}  // namespace ekb::eval
