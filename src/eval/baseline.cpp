#include "eval/baseline.h"

#include <array>
#include <utility>

#include "eval/solution_set.h"
#include "tvm/gpu_tuning.h"
#include "tvm/tvm_compiler.h"

namespace ekb::eval {

namespace {

constexpr std::array<std::pair<BaselineCompiler, std::string_view>, 3> kBaselineCompilers = {{
    {BaselineCompiler::Native, "native"},
    {BaselineCompiler::Tvm, "tvm"},
    {BaselineCompiler::TvmTuned, "tvm-tuned"},
}};

}  // namespace

std::optional<BaselineCompiler> parse_baseline_compiler(std::string_view name) {
  for (const auto& [c, n] : kBaselineCompilers)
    if (n == name) return c;
  return std::nullopt;
}

std::string_view baseline_compiler_name(BaselineCompiler c) {
  for (const auto& [known, n] : kBaselineCompilers)
    if (known == c) return n;
  return "?";
}

std::string baseline_compiler_names() {
  std::string out;
  for (const auto& [c, n] : kBaselineCompilers) out += (out.empty() ? "" : ", ") + std::string(n);
  return out;
}

Baseline make_baseline(const ir::Instance& inst, ir::Target target, const BaselineSpec& spec) {
  Baseline b;
  b.info.compiler = std::string(baseline_compiler_name(spec.compiler));
  if (spec.compiler == BaselineCompiler::Native) {
    b.source = native_baseline_source(inst, target);
    return b;
  }
  tvm::TvmOptions options = tvm::default_options();
  if (spec.compiler == BaselineCompiler::TvmTuned && ir::is_gpu(target)) {
    b.info.tune_trials = spec.tune_trials;
    try {
      const tvm::GpuTuningRecord record = gpu_tuning_record(inst, target, spec.device, spec.tune_trials);
      b.source = gpu_tuning_record_source(record, inst);
      b.info.version = record.tvm_version;
      b.info.tuned = record.sample > 0;
      b.info.records = record.hash();
      if (record.sample == 0) b.info.note = "no sampled schedule beat TVM's untuned translation";
    } catch (const CandidateError& e) {
      b.error = e.what();
    }
    return b;
  }
  if (spec.compiler == BaselineCompiler::TvmTuned) {
    options.tune_trials = spec.tune_trials;
    b.info.tune_trials = spec.tune_trials;
  }
  try {
    tvm::TvmOutput out = tvm_output(inst, target, options);
    b.source = std::move(out.source);
    b.info.version = out.tvm_version;
    if (out.tuning) {
      b.info.tuned = out.tuning->tuned;
      b.info.records = out.tuning->records;
      b.info.note = out.tuning->note;
    }
  } catch (const tvm::CompileError& e) {
    b.error = e.what();
  }
  return b;
}

}  // namespace ekb::eval
