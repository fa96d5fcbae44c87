// One evaluated candidate: what the evaluator produces, what the results database stores and what
// the metrics read (docs/RESULTS.md). Shared vocabulary of src/eval, src/results and the CLI.
#pragma once
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "runtime/error_kind.h"

namespace ekb::eval {

// Why a candidate failed (runtime/error_kind.h): named here too, since every result carries one.
using runtime::ErrorKind;
using runtime::error_kind_name;
using runtime::parse_error_kind;

struct TimeStats {
  double median_ms = 0;
  double p25_ms = 0;
  double p75_ms = 0;
  int runs = 0;           // timed runs behind the statistics
};

// The budget an evaluation spent, recorded with every result so methods compare at equal cost.
struct EvalCost {
  double compile_s = 0;
  double check_s = 0;
  double time_s = 0;
  // The evaluating thread's own CPU time in the timing phase: the harness's work (deriving inputs,
  // poisoning, checks, comparisons), not the kernels' (they run in the worker) nor waiting. Unlike
  // time_s it does not grow when the machine is busy.
  double time_cpu_s = 0;
  bool compile_cached = false;
};

// What producing a candidate cost (docs/METRICS.md, "The budget ledger"): the same fields for every
// method (direct generation, coding agents, LEKA), so that methods are compared at equal budget.
// Read from the solution's .meta.json; evaluations are the method's own compile/check/time rounds
// before it answered, not the final evaluation by `ekb eval` (that is EvalCost).
struct Ledger {
  int64_t llm_calls = 0;
  int64_t input_tokens = 0;
  int64_t output_tokens = 0;
  double cost_usd = 0;
  int64_t evaluations = 0;
  double wall_s = 0;

  Ledger& operator+=(const Ledger& o);
};

// Where a candidate came from, when its solution has a .meta.json: absent otherwise.
struct Provenance {
  std::string method;  // "direct", "agent:claude-code", ...
  std::string model;   // empty when unknown
  Ledger ledger;
};

// What a result's speedup was measured against: the compiler that built the workload's baseline
// (docs/EVALUATION.md, "Baselines"). The native default unless `ekb eval --baseline` chose TVM's.
struct BaselineInfo {
  std::string compiler = "native";  // "native", "tvm" or "tvm-tuned"
  std::string version;              // tvm: TVM's version; empty for native (the device's compiler says it)
  int tune_trials = 0;              // tvm-tuned: MetaSchedule's trial budget
  bool tuned = false;               // tvm-tuned: a tuned schedule was found and used
  std::string records;              // tvm-tuned: the content hash of the tuning records used
  std::string note;                 // tvm-tuned and not tuned: why (the untuned translation was used)

  bool is_native_default() const { return compiler == "native"; }
  // One line for reports: "native", "tvm 0.27.0", "tvm-tuned 0.27.0 (64 trials, records 1a2b3c4d)".
  std::string describe() const;
  bool operator==(const BaselineInfo&) const = default;
};

// As stored in the results database and document: {"compiler", "version", "tune_trials", "tuned",
// "records", "note"}, the tvm-tuned fields only for tvm-tuned. A field missing reads as its default.
nlohmann::json to_json(const BaselineInfo& b);
BaselineInfo baseline_info_from_json(const nlohmann::json& j);

struct CandidateResult {
  std::string task;       // pattern name
  std::string workload;   // "pattern/workload"
  std::string backend;    // "cpu", "cuda", "opencl"
  std::string solution;   // solution id: its path relative to the solutions dir, or "native:default"
  int sample = 0;         // sample index when a workload has several candidates
  bool compiled = false;
  bool correct = false;
  ErrorKind error = ErrorKind::None;
  std::string message;    // human-readable detail for `error` (first mismatch, signal, compiler log excerpt)
  std::optional<TimeStats> time;      // candidate, if correct and timed
  std::optional<TimeStats> baseline;  // baseline, measured interleaved with the candidate
  std::optional<double> speedup;      // the median of the timing rounds' paired ratios baseline / candidate
  BaselineInfo baseline_info;         // what `baseline` and `speedup` were measured against
  double speedup_low = 0, speedup_high = 0;  // its 95% confidence interval, when timed
  double cpu_steal = -1;              // share of CPU time taken by the hypervisor while timing; -1 unknown
  double max_abs_error = 0;           // of the worst correctness trial, for diagnosis
  // The worst compared element's |error| as a fraction of its allowed error, over every trial:
  // how close a pass came (at most 1 when correct). Absent when no output was compared; infinite
  // for a non-finite or integer mismatch (null in JSON, like NaN).
  std::optional<double> max_error_ratio;
  EvalCost cost;
  std::optional<Provenance> provenance;
};

}  // namespace ekb::eval
