// ekb prompt WORKLOAD --backend B: the complete task statement for writing a source solution.
#include <fmt/core.h>

#include "cli/commands.h"
#include "suite/schedule_examples.h"
#include "suite/task_statement.h"

namespace ekb::cli {

namespace {

struct PromptOptions {
  std::string workload;
  ir::Target target = ir::Target::Cpu;
  bool ir_example = false;
  std::string examples_dir;  // default: the backend's (suite::default_schedule_examples_dir)
};

void run_prompt(Context& ctx, const PromptOptions& o) {
  suite::WorkloadEntry w = ctx.workload(o.workload);
  ir::Instance inst = suite::bind_workload(w);
  std::string statement = suite::task_statement(w, inst, o.target);
  if (o.ir_example) {
    // Before the answer section, so that the statement still ends with what to reply.
    const std::string dir = o.examples_dir.empty() ? suite::default_schedule_examples_dir(o.target) : o.examples_dir;
    auto example = suite::find_schedule_example(ctx.suite(), w.full_name(), dir);
    if (!example) throw UsageError("no IR schedule examples in '" + dir + "'");
    const size_t answer = statement.rfind("## Answer");
    statement.insert(answer == std::string::npos ? statement.size() : answer,
                     suite::schedule_example_section(*example, w.pattern->name()));
  }
  fmt::print("{}", statement);
}

}  // namespace

void add_prompt_command(CLI::App& app, Context& ctx) {
  auto o = std::make_shared<PromptOptions>();
  CLI::App* cmd = app.add_subcommand("prompt", "Print the task statement for writing a kernel for one workload");
  cmd->add_option("workload", o->workload, "PATTERN/WORKLOAD")->required();
  add_target_option(cmd, "-b,--backend", o->target, "cpu, cuda or opencl");
  cmd->add_flag("--ir-example", o->ir_example,
                "Add a hand-written IR solution with a schedule for this pattern (or the most similar one)");
  cmd->add_option("--examples", o->examples_dir,
                  "Where --ir-example looks (docs/SOLUTIONS.md layout; default: examples/schedules-cpu, or "
                  "examples/schedules-cuda for cuda and opencl)");
  cmd->callback([&ctx, o] { run_prompt(ctx, *o); });
}

}  // namespace ekb::cli
