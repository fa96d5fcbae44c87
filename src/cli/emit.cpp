// ekb emit WORKLOAD [--backend cpu] [--lir [--after PASS]]: what the native compiler makes of a
// workload with the default lowering: the generated source, or the loop IR it is printed from.
#include <fmt/core.h>

#include "cli/commands.h"
#include "codegen/c_emitter.h"
#include "lower/lower.h"
#include "suite/suite.h"

namespace ekb::cli {

namespace {

struct EmitOptions {
  std::string workload;
  std::string backend = "cpu";
  bool lir = false;
  std::string after;
};

void run_emit(Context& ctx, const EmitOptions& o) {
  if (o.backend != "cpu")
    throw UsageError("the native compiler emits only for cpu so far\n  hint: ekb emit " + o.workload +
                     " --backend cpu");
  if (!o.after.empty() && !o.lir) throw UsageError("--after needs --lir");
  suite::WorkloadEntry w = ctx.workload(o.workload);
  ir::Instance inst = suite::bind_workload(w);
  lir::LowerOptions options;
  options.stop_after = o.after;
  lir::Func f = lir::lower(inst, options);
  if (o.lir) {
    fmt::print("{}", lir::to_string(f));
    return;
  }
  fmt::print("{}", codegen::emit_c_source(f));
}

}  // namespace

void add_emit_command(CLI::App& app, Context& ctx) {
  auto o = std::make_shared<EmitOptions>();
  CLI::App* cmd = app.add_subcommand("emit", "Print the native compiler's default lowering of one workload");
  cmd->add_option("workload", o->workload, "PATTERN/WORKLOAD")->required();
  cmd->add_option("-b,--backend", o->backend, "cpu (cuda and opencl to come)")
      ->check(CLI::IsMember({"cpu", "cuda", "opencl"}))
      ->capture_default_str();
  cmd->add_flag("--lir", o->lir, "Print the loop IR instead of the source");
  cmd->add_option("--after", o->after, "With --lir: stop after this lowering pass")
      ->check(CLI::IsMember(lir::pass_names()));
  cmd->callback([&ctx, o] { run_emit(ctx, *o); });
}

}  // namespace ekb::cli
