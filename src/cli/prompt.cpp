// ekb prompt WORKLOAD --backend B: the complete task statement for writing a source solution.
#include <fmt/core.h>

#include "cli/commands.h"
#include "suite/task_statement.h"

namespace ekb::cli {

namespace {

struct PromptOptions {
  std::string workload;
  std::string backend = "cpu";
};

void run_prompt(Context& ctx, const PromptOptions& o) {
  auto target = codegen::parse_target(o.backend);
  if (!target) throw UsageError("unknown backend '" + o.backend + "'\n  hint: the backends are cpu, cuda and opencl");
  suite::WorkloadEntry w = ctx.workload(o.workload);
  ir::Instance inst = suite::bind_workload(w);
  fmt::print("{}", suite::task_statement(w, inst, *target));
}

}  // namespace

void add_prompt_command(CLI::App& app, Context& ctx) {
  auto o = std::make_shared<PromptOptions>();
  CLI::App* cmd = app.add_subcommand("prompt", "Print the task statement for writing a kernel for one workload");
  cmd->add_option("workload", o->workload, "PATTERN/WORKLOAD")->required();
  cmd->add_option("-b,--backend", o->backend, "cpu, cuda or opencl")
      ->check(CLI::IsMember({"cpu", "cuda", "opencl"}))
      ->capture_default_str();
  cmd->callback([&ctx, o] { run_prompt(ctx, *o); });
}

}  // namespace ekb::cli
