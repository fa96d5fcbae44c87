// ekb workspace create | check | collect: task folders for external coding agents (docs/AGENTS.md).
// `check` is hidden: agents call it through the folder's `check` script.
#include <fmt/core.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>

#include "cli/commands.h"
#include "runtime/calibration.h"
#include "runtime/compile_cache.h"
#include "workspace/workspace.h"

namespace ekb::cli {

namespace {

struct WorkspaceOptions {
  std::string workload;
  std::string dir;
  ir::Target backend = ir::Target::Cpu;
  std::string language = "c";
  bool timing = true;
  workspace::CollectOptions collect;
};

void run_create(Context& ctx, const WorkspaceOptions& o) {
  suite::WorkloadEntry w = ctx.workload(o.workload);
  workspace::CreateOptions opt;
  opt.dir = o.dir;
  opt.backend = o.backend;
  opt.language = o.language;
  // The check script calls this very binary by its absolute path, from wherever the agent runs it.
  opt.ekb_path = std::filesystem::read_symlink("/proc/self/exe").string();
  if (ctx.suite_dir != suite::Suite::default_dir()) opt.suite_dir = std::filesystem::absolute(ctx.suite_dir).string();
  workspace::WorkspaceInfo info;
  try {
    info = workspace::create_workspace(w, opt);
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
  fmt::print("workspace for {} on {} in {}: edit {}, run ./check\n", info.workload, info.backend, o.dir,
             info.solution_file);
}

void run_check(Context& ctx, const WorkspaceOptions& o) {
  workspace::WorkspaceInfo info;
  try {
    info = workspace::read_workspace(o.dir);
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
  suite::WorkloadEntry w = ctx.workload(info.workload);
  // Fresh inputs on every call: nothing one check shows can be replayed by the next solution.
  std::random_device rd;
  const uint64_t seed = (static_cast<uint64_t>(rd()) << 32) | rd();
  workspace::CheckRecord record;
  record.started = runtime::utc_timestamp_now();
  const auto start = std::chrono::steady_clock::now();
  eval::CandidateResult r;
  try {
    r = workspace::check_solution(w, info, o.dir, o.timing, seed);
  } catch (const std::exception& e) {  // no such device, no worker: the harness's failure
    r.error = eval::ErrorKind::Internal;
    r.message = e.what();
  }
  record.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  record.compiled = r.compiled;
  record.correct = r.correct;
  record.error = r.error == eval::ErrorKind::None ? "" : std::string(eval::error_kind_name(r.error));
  record.speedup = r.speedup;
  {
    std::ifstream in(std::filesystem::path(o.dir) / info.solution_file, std::ios::binary);
    std::string code((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    record.solution_hash = runtime::content_key({code});
  }
  record = workspace::log_check(info, o.dir, record);
  fmt::print("{}", workspace::check_feedback(r, info, record.number));
  fmt::print("({:.1f} s)\n", record.wall_s);
  g_exit_code = r.correct ? 0 : 1;
}

void run_collect(const WorkspaceOptions& o) {
  workspace::Collected c;
  try {
    c = workspace::collect_workspace(o.dir, o.collect);
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
  const eval::SolutionMeta& m = c.meta;
  fmt::print("collected sample {} ({}): {}\n", m.sample, m.status == "ok" ? "ok" : m.status + ": " + m.error,
             c.solution_path.empty() ? c.meta_path : c.solution_path);
  fmt::print("  {} check calls, {:.1f} s, {} LLM calls, {} input + {} output tokens, ${:.4f}\n", m.check_calls.value_or(0),
             m.ledger.wall_s, m.ledger.llm_calls, m.ledger.input_tokens, m.ledger.output_tokens, m.ledger.cost_usd);
  if (m.status == "failed") g_exit_code = 1;  // a ledger that does not verify: recorded, and said
}

}  // namespace

void add_workspace_command(CLI::App& app, Context& ctx) {
  auto o = std::make_shared<WorkspaceOptions>();
  CLI::App* cmd = app.add_subcommand("workspace", "Task folders for external coding agents: create, collect (docs/AGENTS.md)");
  cmd->require_subcommand(1);

  CLI::App* create = cmd->add_subcommand("create", "Write a task folder: TASK.md, README.md, a skeleton, ABI header, ./check");
  create->add_option("workload", o->workload, "PATTERN/WORKLOAD")->required();
  create->add_option("dir", o->dir, "The folder to create (must not exist, or be empty)")->required();
  add_target_option(create, "-b,--backend", o->backend, "cpu, cuda or opencl");
  create->add_option("--lang", o->language, "cpu: the skeleton's language, c or cpp")
      ->check(CLI::IsMember({"c", "cpp"}))
      ->capture_default_str();
  create->callback([&ctx, o] { run_create(ctx, *o); });

  CLI::App* check = cmd->add_subcommand("check", "Compile, test and time a workspace's solution (its ./check calls this)");
  check->group("");  // hidden: agents use the script
  check->add_option("dir", o->dir, "The workspace")->required();
  check->add_flag("!--no-timing", o->timing, "Correctness only");
  check->callback([&ctx, o] { run_check(ctx, *o); });

  CLI::App* collect = cmd->add_subcommand("collect", "Record a workspace's solution, check count, ledger and transcript");
  collect->add_option("dir", o->dir, "The workspace")->required();
  collect->add_option("-o,--out", o->collect.out, "Solutions directory (docs/SOLUTIONS.md layout)")->required();
  collect->add_option("--transcript", o->collect.transcript,
                      "The agent's output (Claude Code --output-format json, Codex --json, Aider's console), copied "
                      "beside the solution; token usage and cost are read from it")
      ->check(CLI::ExistingFile);
  collect->add_option("--sample", o->collect.sample, "Sample index (default: the workload's next free one)");
  collect->add_option("--agent", o->collect.agent, "Agent name: method agent:NAME (default: recognized from the transcript)");
  collect->add_option("--model", o->collect.model, "The agent's model (default: from the transcript where it says)");
  collect->add_option("--wall-s", o->collect.wall_s,
                      "The agent's wall time in seconds (default: since the workspace was created)");
  collect->callback([o] { run_collect(*o); });
}

}  // namespace ekb::cli
