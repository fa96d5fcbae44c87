// ekb emit WORKLOAD [--backend cpu|cuda|opencl] [--schedule FILE] [--lir [--after PASS]]: what the native
// compiler makes of a workload: the generated source, or the loop IR it is printed from. Without
// --schedule, the default lowering; with it, the IR solution FILE (the pattern with schedule
// blocks) bound to the workload, its schedule applied. `--compiler tvm`: what TVM makes of it
// (docs/TVM.md): the TVMScript it built, then the source the backend compiles (TVM's assembly in
// its C shim); with --source-only that source alone, a solution file; with --out DIR, the source of
// every selected workload as a solutions directory (DIR/PATTERN/WORKLOAD.EXT), all from one process
// and so one TVM bridge (bench/tvm_gpu_sources.sh: TVM's kernels for a GPU machine without TVM).
#include <fmt/core.h>

#include <filesystem>
#include <optional>

#include "cli/commands.h"
#include "codegen/c_emitter.h"
#include "codegen/cuda_emitter.h"
#include "codegen/opencl_emitter.h"
#include "eval/solution_set.h"
#include "lir/loop_ir.h"
#include "lower/lower.h"
#include "lower/schedule_error.h"
#include "runtime/paths.h"
#include "suite/suite.h"
#include "tvm/tvm_compiler.h"

namespace ekb::cli {

namespace {

namespace fs = std::filesystem;

struct EmitOptions {
  std::vector<std::string> names;  // one workload, or with --out a selection
  suite::Selection selection;      // --out: the filters
  std::string out;
  ir::Target backend = ir::Target::Cpu;
  bool lir = false;
  std::string after;
  std::string schedule;
  std::string compiler = "native";
  bool source_only = false;
};

const std::string& single_workload(const EmitOptions& o) {
  if (o.names.size() != 1) throw UsageError("emit prints one workload (--compiler tvm --out DIR writes several)");
  return o.names.front();
}

// --out DIR: every selected workload's TVM source as a solution file; a workload TVM cannot compile
// gets none and is listed (exit code 1 when there is one).
void write_tvm_solutions(Context& ctx, const EmitOptions& o) {
  suite::Selection selection = o.selection;
  selection.names = o.names;
  const std::vector<suite::WorkloadEntry> selected = selected_workloads(ctx, selection);
  size_t written = 0;
  std::vector<std::string> failed;
  for (const suite::WorkloadEntry& w : selected) {
    const std::string name = w.full_name();
    try {
      tvm::TvmOutput out = tvm::compile(suite::bind_workload(w), o.backend);
      runtime::write_file_atomically((fs::path(o.out) / (name + eval::source_solution_extension(o.backend))).string(),
                                     out.source.text);
      ++written;
    } catch (const tvm::CompileError& e) {
      std::string why = e.what();
      failed.push_back(name + ": " + why.substr(0, why.find('\n')).substr(0, 200));
    }
  }
  fmt::print("{} of {} workloads written to {} ({})\n", written, selected.size(), o.out, eval::source_solution_extension(o.backend));
  for (const std::string& f : failed) fmt::print("  no source: {}\n", f);
  if (!failed.empty()) g_exit_code = 1;
}

void run_emit_tvm(Context& ctx, const EmitOptions& o) {
  if (o.lir || !o.schedule.empty()) throw UsageError("--compiler tvm prints TVM's output: no --lir or --schedule");
  if (!o.out.empty()) return write_tvm_solutions(ctx, o);
  suite::WorkloadEntry w = ctx.workload(single_workload(o));
  ir::Instance inst = suite::bind_workload(w);
  tvm::TvmOutput out;
  try {
    out = tvm::compile(inst, o.backend);
  } catch (const tvm::CompileError& e) {
    throw UsageError(e.what());
  }
  if (o.source_only) {
    fmt::print("{}", out.source.text);
    return;
  }
  fmt::print("# TVM {} ({}), cache key {}\n", out.tvm_version, out.cached ? "cached" : "compiled", out.key);
  fmt::print("{}\n", out.tvmscript);
  fmt::print("/* ---- the {} source the backend compiles ---- */\n{}", ir::target_name(o.backend), out.source.text);
}

void run_emit(Context& ctx, const EmitOptions& o) {
  if (o.compiler == "tvm") return run_emit_tvm(ctx, o);
  if (!o.out.empty()) throw UsageError("--out goes with --compiler tvm");
  if (o.source_only) throw UsageError("--source-only goes with --compiler tvm (the native compiler prints only the source)");
  if (!o.after.empty() && !o.lir) throw UsageError("--after needs --lir");
  suite::WorkloadEntry w = ctx.workload(single_workload(o));
  ir::Instance inst = suite::bind_workload(w);
  std::optional<eval::IrSolution> solution;
  if (!o.schedule.empty()) {
    try {
      solution = eval::load_ir_solution(o.schedule, inst);
    } catch (const eval::CandidateError& e) {
      throw UsageError(e.what());
    }
  }
  lower::LowerOptions options = lower::lower_options_for(o.backend);
  options.stop_after = o.after;
  lir::Func f;
  try {
    f = lower::lower(solution ? solution->inst : inst, options);
  } catch (const lower::ScheduleError& e) {
    throw UsageError(e.what());
  }
  if (o.lir) {
    fmt::print("{}", lir::to_string(f));
    return;
  }
  switch (o.backend) {
    case ir::Target::Cpu: fmt::print("{}", codegen::emit_c_source(f)); break;
    case ir::Target::Cuda: fmt::print("{}", codegen::emit_cuda_source(f)); break;
    case ir::Target::OpenCL: fmt::print("{}", codegen::emit_opencl_source(f)); break;
  }
}

}  // namespace

void add_emit_command(CLI::App& app, Context& ctx) {
  auto o = std::make_shared<EmitOptions>();
  CLI::App* cmd = app.add_subcommand("emit", "Print the native compiler's lowering of one workload (default, or an IR solution's schedule)");
  cmd->add_option("workload", o->names, "PATTERN/WORKLOAD (with --out: globs over PATTERN/WORKLOAD or pattern names; default all)");
  cmd->add_option("--out", o->out,
                  "With --compiler tvm: write every selected workload's source into this solutions directory");
  add_selection_filters(cmd, o->selection);
  add_target_option(cmd, "-b,--backend", o->backend, "cpu, cuda or opencl");
  cmd->add_option("--schedule", o->schedule,
                  "An IR solution (.ekb: the pattern plus schedule blocks) to lower instead of the default")
      ->check(CLI::ExistingFile);
  cmd->add_option("--compiler", o->compiler, "native (this project's lowering) or tvm (Apache TVM, docs/TVM.md)")
      ->check(CLI::IsMember({"native", "tvm"}));
  cmd->add_flag("--source-only", o->source_only,
                "With --compiler tvm: only the source the backend compiles, a solution file as it stands (how TVM's "
                "kernels are evaluated on a machine without TVM: bench/tvm_gpu_sources.sh)");
  cmd->add_flag("--lir", o->lir, "Print the loop IR instead of the source");
  cmd->add_option("--after", o->after, "With --lir: stop after this lowering pass")
      ->check(CLI::IsMember(lower::pass_names()));
  cmd->callback([&ctx, o] { run_emit(ctx, *o); });
}

}  // namespace ekb::cli
