// The `tvm` compiler interface (docs/TVM.md): a workload compiled by Apache TVM instead of the
// native compiler, for a backend's usual harness. The workload's default-lowered loop IR goes to
// the bridge (python/ekb_tvm, run as a subprocess with the Python environment that
// scripts/install-deps.sh creates) as JSON; TVM builds it, and what comes back is a source the
// backend compiles like any other (no Python and no TVM runtime when it runs): on cpu a C
// translation unit holding TVM's assembly and the shim that gives it the kernel ABI; on cuda TVM's
// kernels and an `ekb_main` launching them; on opencl TVM's kernels and their launch description.
//
// Results are cached by content hash (the bridge's sources, the installed TVM version, the request)
// under <cache>/tvm/, beside the backends' compile caches.
#pragma once
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "ir/instance.h"
#include "ir/target.h"
#include "runtime/backend.h"

namespace ekb::tvm {

// The TVM environment is missing or broken (no interpreter, no tvm package): not the kernel's fault.
// The message says how to create it.
class EnvironmentError : public std::runtime_error {
  using std::runtime_error::runtime_error;
};

// TVM could not translate or build this workload: a `compile` failure carrying TVM's message.
class CompileError : public std::runtime_error {
  using std::runtime_error::runtime_error;
};
// The bridge ran past TvmOptions::timeout_s (and was killed).
class BridgeTimedOut : public CompileError {
 public:
  using CompileError::CompileError;
};


struct TvmOptions {
  // The environment's interpreter: $EKB_TVM_PYTHON, else <source tree>/.venv-tvm/bin/python.
  std::string python;
  // The bridge package's parent directory: $EKB_TVM_BRIDGE, else <source tree>/python.
  std::string bridge_dir;
  // The cache root (runtime::default_cache_dir() when empty).
  std::string cache_dir;
  // cpu: code for this machine's CPU (LLVM's mcpu of the host) instead of generic x86-64, as the
  // native compiler's -march=native (docs/TVM.md, "The artifact").
  bool native_cpu = true;
  // cpu: MetaSchedule's trial budget (docs/TVM.md, "Tuning"); 0 builds the untuned translation.
  // A workload whose compute layer is not all pure definitions, or whose loop IR has no block
  // form, is built untuned all the same, its TvmOutput saying why.
  int tune_trials = 0;
  double timeout_s = 900;
};

// What tuning did for one compile (tune_trials > 0).
struct TuningOutcome {
  bool tuned = false;        // MetaSchedule's best schedule was built
  std::string note;          // when not tuned: why (the untuned translation was built)
  int trials = 0;
  std::string records;       // the content hash of the records applied (empty when none)
  bool tuned_now = false;    // this call ran the search (false: the records were there already)
  double tuning_s = 0;       // the search's wall time when tuned_now
};

struct TvmOutput {
  runtime::Source source;  // what the backend compiles (origin "tvm:default")
  std::string tvmscript;   // the PrimFunc(s) TVM built, as TVMScript (gpu: one per kernel)
  std::string assembly;    // cpu: TVM's LLVM output
  std::string tvm_version;
  std::string key;         // the cache key
  bool cached = false;
  double seconds = 0;      // wall time of this call
  std::optional<TuningOutcome> tuning;  // with tune_trials > 0
};

// The id of TVM's compilation as a solution (`ekb eval -s tvm`), and of its tuned compilation
// (`ekb eval -s tvm-tuned`).
inline constexpr std::string_view kTvmDefault = "tvm:default";
inline constexpr std::string_view kTvmTuned = "tvm:tuned";

// Where the tuning records of the compile with cache key `key` are kept: <cache>/tvm-records/<key>.
std::string records_dir(const TvmOptions& options, const std::string& key);

TvmOptions default_options();

// The directory all of `options`' cache's records live in: <cache>/tvm-records (records_dir's
// parent; GPU tuning records too, tvm/gpu_tuning.h).
std::string records_root(const TvmOptions& options = default_options());

// TVM's compilation of `inst` for `target`. Throws CompileError for what TVM
// refuses, EnvironmentError when the environment is missing.
TvmOutput compile(const ir::Instance& inst, ir::Target target, const TvmOptions& options = default_options());

// GPU tuning as a batch (docs/TVM.md, "GPU tuning"): schedules of the workload's block form
// sampled from MetaSchedule's design space for a gpu target without measuring them, each built by
// TVM and wrapped in the ABI as the gpu route wraps its kernels. The device evaluates them.
struct GpuCandidate {
  std::string source;      // what the backend compiles (CUDA with ekb_main, or OpenCL with ekb-launch)
  std::string trace;       // the schedule's MetaSchedule trace, as Python
  std::string trace_hash;  // its content hash (16 hex digits)
};

struct GpuCandidates {
  std::vector<GpuCandidate> candidates;  // distinct sources, at most the count asked for
  std::string note;                      // when there is no block form: why (then no candidates)
  int sketches = 0;                      // the design space's sketches the samples were drawn from
  int attempts = 0;                      // samples drawn
  std::string rejected;                  // why samples were dropped, counted: "3 rejected by VerifyGPUCode"
  std::string tvm_version;
  std::string key;  // the bridge result's cache key
  bool cached = false;
};

// Up to `count` candidates for `target` (cuda or opencl), the samples drawn from `seed`. Throws
// CompileError where TVM fails outside a sample, EnvironmentError without the environment.
GpuCandidates gpu_candidates(const ir::Instance& inst, ir::Target target, int count, int seed,
                             const TvmOptions& options = default_options());

// The bridge's request for `inst`: the JSON given to `python -m ekb_tvm compile`.
std::string request_json(const ir::Instance& inst, ir::Target target, const TvmOptions& options);

}  // namespace ekb::tvm
