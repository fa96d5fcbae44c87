// Finding the candidates in a solutions directory (docs/SOLUTIONS.md) and turning each into the
// source a backend compiles: source files as they are, IR solutions through the native compiler.
#pragma once
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "eval/solution_meta.h"
#include "ir/instance.h"
#include "ir/target.h"
#include "runtime/backend.h"
#include "suite/suite.h"
#include "tvm/gpu_tuning.h"
#include "tvm/tvm_compiler.h"

namespace ekb::eval {

struct CandidateRef {
  suite::WorkloadEntry workload;
  std::string solution;  // id: the path relative to the solutions dir, or "native:default"
  int sample = 0;
  std::string path;      // the file; empty when missing or native
  bool native = false;   // the native default lowering itself (`--solutions native`)
  bool tvm = false;      // TVM's compilation of the workload (`--solutions tvm`, docs/TVM.md)
  std::optional<SolutionMeta> meta;  // from WORKLOAD.sN.meta.json, when there is one
  int tune_trials = 0;   // tvm: MetaSchedule's trial budget (`--solutions tvm-tuned`); 0 untuned
  // tvm-tuned on cuda and opencl: the device whose GPU tuning record is used (tune_trials candidates).
  std::string device;
  // No file and no metadata: the workload has no solution at all.
  bool missing() const { return path.empty() && !native && !tvm && !meta; }
  // Metadata without a code file: a sample the generator failed to produce (meta->failure_kind()).
  bool failed_generation() const { return path.empty() && !native && !tvm && meta.has_value(); }
};

// The id of the native compiler's default lowering, the baseline of every workload.
inline constexpr std::string_view kNativeDefault = "native:default";
// MetaSchedule's trial budget per workload unless `--tune-trials` says otherwise (the 64).
inline constexpr int kDefaultTuneTrials = 64;

// The workload's element types in the order of its pattern's `types` names, joined by '.': "f16"
// for linalg.gemm/medium_f16, "" for a pattern without `types`. A whole-pattern file
// all.TYPES.EXT (all.f16.c) is used for the workloads with that signature, before all.EXT.
std::string workload_type_signature(const ir::Pattern& pattern, const ir::Workload& workload);

// A source solution's file extension for the backend (docs/SOLUTIONS.md): ".c" or, for C++,
// ".cpp" on cpu; ".cu" on cuda; ".cl" on opencl.
std::string source_solution_extension(ir::Target target, bool cpp = false);

// Every candidate for the selected workloads, in selection order, samples ascending. A workload
// with no file gets one missing entry. `dir` == "native" selects the default lowering itself,
// `dir` == "tvm" TVM's compilation of each workload (tvm::kTvmDefault), `dir` == "tvm-tuned" its
// compilation tuned by MetaSchedule (tvm::kTvmTuned, kDefaultTuneTrials trials unless the caller
// sets tune_trials).
// Each sample's WORKLOAD.sN.meta.json (WORKLOAD.meta.json for sample 0) is read into `meta`; one
// without a code file is a failed_generation() sample (its "backend", when set, must be `target`).
// Throws std::invalid_argument for a directory that does not exist, inconsistent samples,
// malformed metadata, or an all.X.EXT whose X is not a type signature of the pattern.
std::vector<CandidateRef> find_candidates(const std::string& dir, const std::vector<suite::WorkloadEntry>& selected,
                                          ir::Target target);

// A candidate that cannot even become source (an IR solution that does not parse, verify, or match
// the pattern's interface): the evaluation records it as a compile failure with this message.
class CandidateError : public std::runtime_error {
  using std::runtime_error::runtime_error;
};

// An IR solution (pattern, schedule and memory layers) bound to the suite workload of `suite_inst`
// and checked to have its interface. Throws CandidateError.
struct IrSolution {
  std::unique_ptr<ir::Module> module;  // inst points into it
  ir::Instance inst;
};
IrSolution load_ir_solution(const std::string& path, const ir::Instance& suite_inst);

// The source to compile for `c` on `target`; `inst` is the workload bound from the suite. IR
// solutions go through the native compiler's emitter for that target (C for cpu, CUDA for cuda,
// OpenCL C for opencl); a tvm candidate is TVM's output for `target`, and what TVM refuses is a
// CandidateError (a compile failure with TVM's message). A missing TVM environment throws
// tvm::EnvironmentError.
// Source files get eval/element_type_check.h's check appended: a kernel declared for another
// workload's element types fails to compile with "element types differ: ...".
runtime::Source candidate_source(const CandidateRef& c, const ir::Instance& inst, ir::Target target = ir::Target::Cpu);

// TVM's compilation of `inst` for `target` (tvm::compile), its source's arguments named as every
// candidate's are. Throws tvm::CompileError and tvm::EnvironmentError.
tvm::TvmOutput tvm_output(const ir::Instance& inst, ir::Target target, const tvm::TvmOptions& options);

// The GPU tuning record of `inst` on `device` (cuda or opencl, `candidates` sampled: docs/TVM.md,
// "GPU tuning"). Throws CandidateError when there is none (the message names the script that makes
// records) or it is unreadable.
tvm::GpuTuningRecord gpu_tuning_record(const ir::Instance& inst, ir::Target target, const std::string& device,
                                       int candidates);
// Its source, its arguments named as every candidate's are.
runtime::Source gpu_tuning_record_source(const tvm::GpuTuningRecord& record, const ir::Instance& inst);

// The baseline: the native compiler's default lowering of the suite pattern for `target`.
runtime::Source native_baseline_source(const ir::Instance& inst, ir::Target target = ir::Target::Cpu);

}  // namespace ekb::eval
