// ekb agent --policy search|llm [--model PROFILE] --backend B --budget evaluations=N[,wall=S,...]
// --out DIR [--seed S] [selection]: LEKA (docs/AGENT.md). Per selected workload the loop proposes, checks and keeps
// candidates one IR layer at a time, then writes the best as DIR/PATTERN/WORKLOAD.ekb (or a
// source) with its .meta.json, and the steps as DIR/PATTERN/WORKLOAD.trajectory.jsonl; `ekb eval
// -s DIR` then judges the solutions like any other method's.
#include <fmt/core.h>

#include <filesystem>
#include <memory>
#include <optional>

#include "agent/agent_loop.h"
#include "agent/budget.h"
#include "agent/llm_policy.h"
#include "agent/search_policy.h"
#include "cli/commands.h"
#include "llm/model_profile.h"
#include "results/calibration_cache.h"
#include "suite/selection.h"

namespace ekb::cli {

namespace {

struct AgentCommandOptions {
  std::string policy = "search";
  // The llm policy's: as `ekb generate` takes them (docs/GENERATION.md).
  std::string model;
  std::string models_path;
  std::optional<double> temperature;
  bool replay = false;
  bool no_cache = false;
  std::string cache_dir;
  std::string log_path;  // default: OUT/llm-requests.jsonl
  ir::Target backend = ir::Target::Cpu;
  runtime::BackendOptions backend_options;  // opencl: the platform, device and build options
  std::string budget = "evaluations=16";
  std::string out;
  uint64_t seed = 0;
  double step_time_s = agent::quick_step_options().timing.max_time_s;
  bool reference_cache = true;
  suite::Selection selection;
  bool exclude_heldout = false;
  eval::Shard shard;  // --shard I/N: the workloads this process optimizes (each one's sample 0)
};

std::string optional_text(const std::optional<double>& x, const char* format) {
  return x ? fmt::format(fmt::runtime(format), *x) : "-";
}

// The policy the options name; the llm policy's configuration and key problems are usage errors.
std::unique_ptr<agent::Policy> make_policy(const AgentCommandOptions& o) {
  if (o.policy == "search") {
    if (!o.model.empty()) throw UsageError("--model is the llm policy's\n  hint: --policy llm --model PROFILE");
    return std::make_unique<agent::SearchPolicy>(o.seed);
  }
  if (o.policy != "llm") throw UsageError("unknown policy '" + o.policy + "'\n  hint: --policy search or llm");
  if (o.model.empty()) throw UsageError("the llm policy needs a model profile\n  hint: --model PROFILE (docs/GENERATION.md)");
  if (o.replay && o.no_cache) throw UsageError("--replay reads the response cache: it cannot go with --no-cache");
  agent::LlmPolicyOptions options;
  options.profile = o.model;
  options.models_path = o.models_path;
  options.temperature = o.temperature;
  options.cache_mode = o.replay ? llm::CacheMode::Replay : o.no_cache ? llm::CacheMode::Off : llm::CacheMode::ReadWrite;
  options.cache_dir = o.cache_dir;
  options.log_path = o.log_path.empty() ? (std::filesystem::path(o.out) / "llm-requests.jsonl").string() : o.log_path;
  std::filesystem::create_directories(std::filesystem::path(options.log_path).parent_path());
  try {
    return agent::make_llm_policy(options);
  } catch (const llm::ConfigError& e) {
    throw UsageError(e.what());
  } catch (const llm::MissingApiKey& e) {
    throw UsageError(e.what());
  }
}

void run_agent_command(Context& ctx, AgentCommandOptions& o) {
  agent::AgentOptions options;
  try {
    options.budget = agent::parse_budget(o.budget);
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
  if (options.budget.evaluations == 0 && options.budget.wall_s == 0)
    throw UsageError("the budget needs a limit on evaluations or wall time\n  hint: --budget evaluations=16");
  o.selection.include_heldout = !o.exclude_heldout;
  std::vector<suite::WorkloadEntry> selected = selected_workloads(ctx, o.selection);
  std::erase_if(selected, [&](const suite::WorkloadEntry& w) { return !o.shard.owns(w.full_name(), 0); });
  std::unique_ptr<runtime::Backend> backend = make_cli_backend(o.backend, o.backend_options);
  options.out_dir = o.out;
  options.step_eval.timing.max_time_s = o.step_time_s;
  std::optional<eval::ReferenceCache> cache;
  if (o.reference_cache) cache = eval::ReferenceCache::default_cache();
  options.reference_cache = cache ? &*cache : nullptr;
  options.calibration = results::load_calibration_file(std::string(backend->name()), backend->device_info().name);

  std::unique_ptr<agent::Policy> made = make_policy(o);
  agent::Policy& policy = *made;
  fmt::print(stderr, "leka:{} on {} ({}), {} workloads, budget {} per workload{}\n", policy.name(), backend->name(),
             backend->device_info().name, selected.size(), o.budget,
             options.calibration ? "" : " (no calibration: no roofline fractions; `ekb calibrate` measures one)");
  fmt::print("{:<48} {:>5} {:>6} {:>9} {:>9} {:>8}  {}\n", "workload", "steps", "kept", "final", "best ms", "wall s",
             "trajectory");
  for (const auto& w : selected) {
    agent::AgentRun run = agent::run_agent(policy, *backend, w, options);
    int kept = 0;
    for (const auto& s : run.steps) kept += s.index > 0 && s.outcome == "kept" ? 1 : 0;
    const std::string final = run.final.correct ? optional_text(run.final.speedup, "{:.2f}x") : run.final.error;
    fmt::print("{:<48} {:>5} {:>6} {:>9} {:>9} {:>8.1f}  {}\n", w.full_name(), run.steps.size(), kept, final,
               optional_text(run.final.ms, "{:.4f}"), run.final.spent.wall_s, run.trajectory);
    std::fflush(stdout);
  }
  fmt::print("\nsolutions: {} (`ekb eval -b {} -s {}` judges them)\n", o.out, ir::target_name(o.backend), o.out);
}

}  // namespace

void add_agent_command(CLI::App& app, Context& ctx) {
  auto o = std::make_shared<AgentCommandOptions>();
  CLI::App* cmd = app.add_subcommand("agent", "LEKA: optimize workloads one IR layer at a time (docs/AGENT.md)");
  cmd->add_option("--policy", o->policy, "What proposes the candidates: search (no model) or llm (a model profile)")
      ->capture_default_str();
  cmd->add_option("-m,--model", o->model, "The llm policy's model profile (docs/GENERATION.md)");
  cmd->add_option("--models", o->models_path,
                  "llm: the models file (TOML; default: $EKB_MODELS, else ./ekb-models.toml, else ~/.config/ekb/models.toml)");
  cmd->add_option("--temperature", o->temperature, "llm: sampling temperature (default: the profile's)");
  cmd->add_flag("--replay", o->replay, "llm: answer only from the response cache (a missing answer stops the run)");
  cmd->add_flag("--no-cache", o->no_cache, "llm: ask the server every time and store nothing");
  cmd->add_option("--cache-dir", o->cache_dir, "llm: cache root (default: $EKB_CACHE_DIR, else ~/.cache/ekb)");
  cmd->add_option("--log", o->log_path, "llm: JSONL log of every request and response (default: OUT/llm-requests.jsonl)");
  add_target_option(cmd, "-b,--backend", o->backend, "cpu, cuda or opencl");
  add_opencl_options(cmd, o->backend_options);
  cmd->add_option("--budget", o->budget,
                  "Limits per workload, KEY=VALUE joined by commas: evaluations, wall (seconds), llm_calls, "
                  "input_tokens, output_tokens, usd")
      ->capture_default_str();
  cmd->add_option("-o,--out", o->out, "The solutions directory to write (docs/SOLUTIONS.md)")->required();
  add_shard_option(cmd, o->shard);
  cmd->add_option("--seed", o->seed, "The search's seed: the same seed and outcomes give the same proposals")
      ->capture_default_str();
  cmd->add_option("--step-time", o->step_time_s, "Timing budget of one step's evaluation, seconds")
      ->check(CLI::Range(0.01, 60.0))
      ->capture_default_str();
  cmd->add_flag("!--no-reference-cache", o->reference_cache, "Recompute every reference output");
  cmd->add_option("names", o->selection.names, "Globs over PATTERN/WORKLOAD or pattern names");
  add_selection_filters(cmd, o->selection);
  cmd->add_flag("--no-heldout", o->exclude_heldout, "Leave out held-out workloads");
  cmd->callback([&ctx, o] { run_agent_command(ctx, *o); });
}

}  // namespace ekb::cli
