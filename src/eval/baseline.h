// The baseline every candidate of a workload is measured against (docs/EVALUATION.md,
// "Baselines"): the native compiler's default lowering, or TVM's compilation of the workload
// (`ekb eval --baseline tvm`), tuned by MetaSchedule or not. Whichever it is goes through the same
// protocol: checked against the reference in every worker before the candidate is loaded.
#pragma once
#include <optional>
#include <string>
#include <string_view>

#include "eval/result.h"
#include "ir/instance.h"
#include "ir/target.h"
#include "runtime/backend.h"

namespace ekb::eval {

enum class BaselineCompiler { Native, Tvm, TvmTuned };

// "native", "tvm", "tvm-tuned"; nullopt for any other name.
std::optional<BaselineCompiler> parse_baseline_compiler(std::string_view name);
std::string_view baseline_compiler_name(BaselineCompiler c);
// The names parse_baseline_compiler accepts, for messages: "native, tvm, tvm-tuned".
std::string baseline_compiler_names();

struct BaselineSpec {
  BaselineCompiler compiler = BaselineCompiler::Native;
  int tune_trials = 64;  // tvm-tuned: MetaSchedule's trial budget per workload (kDefaultTuneTrials)
  // tvm-tuned on cuda and opencl: the device whose GPU tuning record (tvm/gpu_tuning.h) is used,
  // tune_trials being its candidate count.
  std::string device;
};

struct Baseline {
  runtime::Source source;  // what the backend compiles; empty when `error` is set
  BaselineInfo info;       // stored with every result measured against it
  // Non-empty when the chosen compiler could not build the workload (TVM's message): every
  // candidate of the workload is then an `internal` failure, since nothing can be measured.
  std::string error;
};

// The baseline of `inst` on `target`. A missing TVM environment throws tvm::EnvironmentError (it
// stops the run: no workload could have this baseline).
Baseline make_baseline(const ir::Instance& inst, ir::Target target, const BaselineSpec& spec = {});

}  // namespace ekb::eval
