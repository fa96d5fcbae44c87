// ekb experiment --methods direct,leka:llm,leka:search[,agent:NAME] [--model PROFILE] --backend B
// --budget evaluations=N[,...] --out DIR [--baseline native|tvm|tvm-tuned] [selection]: the
// article's comparison (docs/AGENT.md, "The experiment"). Every method runs on the same workloads
// at the same budget through its own command, as a user would run it (`ekb generate`, `ekb agent`,
// scripts/run_agent.sh), each child of this very binary; then one `ekb eval` per method judges its
// solutions with the same options against the same baseline, and the table compares the methods.
// A method's workloads that already have their solution are not run again, and an evaluation whose
// solutions did not change is read back from the database, so a killed experiment resumes.
#include <fmt/core.h>
#include <fmt/ranges.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <set>

#include "agent/budget.h"
#include "cli/commands.h"
#include "cli/report.h"
#include "cli/results_db.h"
#include "llm/sample_files.h"
#include "results/run_report.h"
#include "runtime/compile_cache.h"
#include "runtime/paths.h"
#include "runtime/subprocess.h"
#include "suite/selection.h"

namespace ekb::cli {

namespace {

namespace fs = std::filesystem;

struct ExperimentOptions {
  std::string methods = "direct,leka:llm,leka:search";
  std::string model;
  std::string models_path;
  std::string cache_dir;
  ir::Target backend = ir::Target::Cpu;
  std::string budget = "evaluations=16";
  std::string out;
  std::string baseline = "native";
  uint64_t seed = 0;
  std::string agent_command;  // agent:NAME: run_agent.sh's --command (an agent without a recipe)
  std::string agent_script;   // default: the source tree's scripts/run_agent.sh
  double min_time_s = 0;      // 0: ekb eval's default
  suite::Selection selection;
  bool exclude_heldout = false;
  std::string db;      // default: OUT/results.db
  eval::Shard shard;   // --shard I/N: this process's part of every method's work and evaluation
};

// One method of the comparison: its name as the user wrote it and the directory of its solutions.
struct Method {
  std::string name;  // "direct", "leka:llm", "leka:search", "agent:claude-code"
  std::string dir;   // OUT/direct, OUT/leka-llm, ...
  bool uses_model() const { return name == "direct" || name == "leka:llm"; }
};

std::vector<Method> parse_methods(const ExperimentOptions& o) {
  std::vector<Method> methods;
  std::set<std::string> seen;
  std::string rest = o.methods;
  while (!rest.empty()) {
    const size_t comma = rest.find(',');
    std::string name = rest.substr(0, comma);
    rest = comma == std::string::npos ? "" : rest.substr(comma + 1);
    if (name.empty()) continue;
    const bool known = name == "direct" || name == "leka:llm" || name == "leka:search" ||
                       (name.starts_with("agent:") && name.size() > 6 && name.find('/') == std::string::npos);
    if (!known)
      throw UsageError("unknown method '" + name + "'\n  hint: direct, leka:llm, leka:search or agent:NAME");
    if (!seen.insert(name).second) continue;
    std::string dir_name = name;
    std::replace(dir_name.begin(), dir_name.end(), ':', '-');
    methods.push_back({name, (fs::path(o.out) / dir_name).string()});
  }
  if (methods.empty()) throw UsageError("--methods names no method");
  return methods;
}

// Runs this binary (or the agent driver) with `args`, its output passed through as it comes;
// a failure stops the experiment with the command's last lines.
void run_child(const std::vector<std::string>& argv) {
  fmt::print(stderr, "\n$ {}\n", fmt::join(argv, " "));
  std::fflush(stderr);
  runtime::CommandOptions options;
  options.timeout_s = 1e9;  // the budget limits the methods, not a wall clock of ours
  options.echo_fd = STDOUT_FILENO;
  options.max_output = 64 << 10;
  const runtime::CommandResult r = runtime::run_command(argv, options);
  if (!r.ok()) {
    const std::string tail = r.output.size() > 2000 ? r.output.substr(r.output.size() - 2000) : r.output;
    throw std::runtime_error(fmt::format("`{}` failed (exit {}, signal {})\n{}", argv[0] + " " + argv[1],
                                         r.exit_code, r.term_signal, tail));
  }
}

// The workloads of `selected` that `method` has not finished: those without a solution record
// (PATTERN/WORKLOAD.s0.meta.json for the agents; every sample's for direct, which `ekb generate`
// itself skips, so direct gets them all).
// Of a shard, only the workloads it owns (direct: `ekb generate --shard` picks its samples).
std::vector<std::string> unfinished(const Method& m, const std::vector<suite::WorkloadEntry>& selected,
                                    const eval::Shard& shard) {
  std::vector<std::string> names;
  for (const auto& w : selected)
    if (m.name == "direct" ||
        (shard.owns(w.full_name(), 0) && !fs::exists(llm::sample_meta_path(m.dir, w.full_name(), 0))))
      names.push_back(w.full_name());
  return names;
}

std::vector<std::string> method_command(const ExperimentOptions& o, const Method& m, const eval::Ledger& budget,
                                        const std::vector<std::string>& names) {
  const std::string self = fs::read_symlink("/proc/self/exe").string();
  const std::string backend(ir::target_name(o.backend));
  std::vector<std::string> argv;
  auto model_args = [&] {
    argv.insert(argv.end(), {"--model", o.model});
    if (!o.models_path.empty()) argv.insert(argv.end(), {"--models", o.models_path});
    if (!o.cache_dir.empty()) argv.insert(argv.end(), {"--cache-dir", o.cache_dir});
  };
  if (m.name == "direct") {
    // One sample per evaluation of the budget: generation has nothing else to spend it on.
    argv = {self, "generate", "--backend", backend, "--samples", std::to_string(budget.evaluations), "--out", m.dir,
            "--shard", o.shard.text()};
    model_args();
  } else if (m.name.starts_with("leka:")) {
    argv = {self, "agent", "--policy", m.name.substr(5), "--backend", backend, "--budget", o.budget, "--out", m.dir,
            "--shard", o.shard.text()};
    if (m.name == "leka:llm") model_args();
    else argv.insert(argv.end(), {"--seed", std::to_string(o.seed)});
  } else {
    const std::string script =
        o.agent_script.empty() ? (fs::path(EKB_SOURCE_DIR) / "scripts" / "run_agent.sh").string() : o.agent_script;
    argv = {"bash", script, "--backend", backend, "--out", m.dir, "--work", (fs::path(o.out) / "work" / m.name.substr(6)).string(),
            "--ekb", self};
    // An external agent's budget is its wall time; its ./check calls are counted in its ledger.
    if (budget.wall_s > 0) argv.insert(argv.end(), {"--timeout", fmt::format("{:.0f}", budget.wall_s)});
    if (!o.model.empty()) argv.insert(argv.end(), {"--model", o.model});
    if (!o.agent_command.empty()) argv.insert(argv.end(), {"--command", o.agent_command});
    argv.push_back(m.name.substr(6));
  }
  argv.insert(argv.end(), names.begin(), names.end());
  return argv;
}

// The run id of a method's evaluation: its name and a hash of its solutions' records, so that an
// evaluation is read back while they stay the same and made afresh when a resumed method added some.
// Shards, each holding only its own solutions, share one run per method instead: its id is a hash
// of the experiment's parameters and selection.
std::string evaluation_run_id(const Method& m, const ExperimentOptions& o, const std::vector<std::string>& names) {
  if (!o.shard.whole()) {
    std::string text = fmt::format("{}|{}|{}|{}|{}|{}|{}", o.baseline, ir::target_name(o.backend), o.budget, o.model,
                                   o.seed, o.min_time_s, o.shard.count);
    for (const auto& n : names) text += "|" + n;
    return fs::path(m.dir).filename().string() + "-" + runtime::content_key({text}).substr(0, 16);
  }
  std::vector<std::string> entries;
  if (fs::exists(m.dir))
    for (const auto& e : fs::recursive_directory_iterator(m.dir))
      if (e.is_regular_file() && e.path().string().ends_with(".meta.json"))
        entries.push_back(fs::relative(e.path(), m.dir).string() + ":" + std::to_string(e.file_size()));
  std::sort(entries.begin(), entries.end());
  std::string text = o.baseline + "|" + std::string(ir::target_name(o.backend));
  for (const auto& e : entries) text += "|" + e;
  return fs::path(m.dir).filename().string() + "-" + runtime::content_key({text}).substr(0, 16);
}

// k of n as a share; unknown when n is 0.
std::optional<double> share(int k, int n) { return n ? std::optional<double>(double(k) / n) : std::nullopt; }

// A method's standing per workload: its best candidate (the fastest correct one; a method with
// several samples per workload, direct, is judged by the best its budget bought, as LEKA is by
// the best it kept).
struct Standing {
  bool correct = false;
  std::optional<double> best_speedup;
  double best_low = 0;  // the lower end of the best speedup's 95% interval
};

struct MethodScores {
  int workloads = 0;
  int correct = 0;
  std::map<double, int> fast;  // p -> workloads whose best beats p times the baseline
  int surely_fast = 0;         // workloads whose best's 95% interval lies above 1
  std::vector<double> best;    // the best speedups of the correct workloads
  eval::Ledger spent;
  int ledgered = 0;
  void add(const Standing& s) {
    ++workloads;
    correct += s.correct ? 1 : 0;
    for (double p : {1.0, 1.5}) fast[p] += s.correct && s.best_speedup && *s.best_speedup > p ? 1 : 0;
    surely_fast += s.correct && s.best_speedup && s.best_low > 1.0 ? 1 : 0;
    if (s.correct && s.best_speedup) best.push_back(*s.best_speedup);
  }
  std::string fast_text(double p) const { return percent(share(fast.at(p), workloads)); }
  std::string geomean_text() const {
    if (best.empty()) return "-";
    double log_sum = 0;
    for (double x : best) log_sum += std::log(x);
    return fmt::format("{:.2f}x", std::exp(log_sum / best.size()));
  }
};

struct MethodReport {
  MethodScores all;
  std::map<std::string, MethodScores> by_group;  // "domain nn", "level fused", ...
};

MethodReport score_method(const results::RunReport& report) {
  std::map<std::string, Standing> standing;
  std::map<std::string, eval::Ledger> ledgers;
  MethodReport out;
  for (const std::string& w : report.workloads) standing[w];
  for (const auto& row : report.rows) {
    const eval::CandidateResult& r = row.result;
    Standing& s = standing[r.workload];
    if (r.correct) {
      s.correct = true;
      if (r.speedup && (!s.best_speedup || *r.speedup > *s.best_speedup)) {
        s.best_speedup = r.speedup;
        s.best_low = r.speedup_low;
      }
    }
    if (r.provenance) {
      out.all.spent += r.provenance->ledger;
      ++out.all.ledgered;
    }
  }
  for (const auto& [w, s] : standing) {
    out.all.add(s);
    const results::WorkloadFacts& f = report.facts.at(w);
    out.by_group["domain " + f.domain].add(s);
    out.by_group["level " + f.level].add(s);
  }
  return out;
}

void print_comparison(const std::vector<Method>& methods, const std::vector<MethodReport>& reports,
                      const ExperimentOptions& o) {
  fmt::print("\nexperiment {}: {} methods on {}, budget {} per workload, speedups against {}\n", o.out,
             methods.size(), ir::target_name(o.backend), o.budget, o.baseline);
  fmt::print("  {:<20} {:>9} {:>8} {:>9} {:>9} {:>9} {:>8} | {:>9} {:>10} {:>10} {:>9} {:>7} {:>8}\n", "METHOD",
             "WORKLOADS", "CORRECT", "FAST@1.0", "SURELY>1", "FAST@1.5", "GEOMEAN", "LLM CALLS", "IN TOKENS",
             "OUT TOKENS", "USD", "EVALS", "WALL S");
  for (size_t i = 0; i < methods.size(); ++i) {
    const MethodScores& s = reports[i].all;
    const eval::Ledger& l = s.spent;
    const double per = s.workloads ? 1.0 / s.workloads : 0;  // the ledger per workload
    fmt::print("  {:<20} {:>9} {:>8} {:>9} {:>9} {:>9} {:>8} | {:>9.1f} {:>10.0f} {:>10.0f} {:>9.4f} {:>7.1f} {:>8.1f}\n",
               methods[i].name, s.workloads, percent(share(s.correct, s.workloads)), s.fast_text(1.0),
               percent(share(s.surely_fast, s.workloads)), s.fast_text(1.5),
               s.geomean_text(), l.llm_calls * per, l.input_tokens * per,
               l.output_tokens * per, l.cost_usd * per, l.evaluations * per, l.wall_s * per);
  }
  fmt::print("  (a method's best candidate per workload; SURELY>1: its speedup's 95% interval lies above 1, where FAST@1.0\n"
             "   also counts a kernel no faster than the baseline that measured above it by chance; the ledger is per\n"
             "   workload, from the solutions' .meta.json)\n");
  std::set<std::string> groups;
  for (const auto& r : reports)
    for (const auto& [g, _] : r.by_group) groups.insert(g);
  fmt::print("\nFAST@1.0 by domain and level\n  {:<22} {:>9}", "GROUP", "WORKLOADS");
  for (const auto& m : methods) fmt::print(" {:>14}", m.name);
  fmt::print("\n");
  for (const auto& g : groups) {
    int n = 0;
    for (const auto& r : reports)
      if (auto it = r.by_group.find(g); it != r.by_group.end()) n = std::max(n, it->second.workloads);
    fmt::print("  {:<22} {:>9}", g, n);
    for (const auto& r : reports) {
      auto it = r.by_group.find(g);
      fmt::print(" {:>14}", it == r.by_group.end() ? "-" : it->second.fast_text(1.0));
    }
    fmt::print("\n");
  }
}

void run_experiment(Context& ctx, ExperimentOptions& o) {
  const std::vector<Method> methods = parse_methods(o);
  eval::Ledger budget;
  try {
    budget = agent::parse_budget(o.budget);
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
  const bool needs_model = std::any_of(methods.begin(), methods.end(), [](const Method& m) { return m.uses_model(); });
  if (needs_model && o.model.empty())
    throw UsageError("direct and leka:llm need a model profile\n  hint: --model PROFILE (docs/GENERATION.md)");
  if (std::any_of(methods.begin(), methods.end(), [](const Method& m) { return m.name == "direct"; }) &&
      budget.evaluations <= 0)
    throw UsageError("direct spends its budget as samples: the budget needs evaluations=N\n  hint: --budget evaluations=16");
  o.selection.include_heldout = !o.exclude_heldout;
  const std::vector<suite::WorkloadEntry> selected = selected_workloads(ctx, o.selection);
  std::vector<std::string> all_names;
  for (const auto& w : selected) all_names.push_back(w.full_name());
  runtime::make_directories(o.out);
  const std::string db = o.db.empty() ? (fs::path(o.out) / "results.db").string() : o.db;
  const std::string self = fs::read_symlink("/proc/self/exe").string();

  std::vector<MethodReport> reports;
  for (const Method& m : methods) {
    const std::vector<std::string> names = unfinished(m, selected, o.shard);
    if (names.empty()) fmt::print(stderr, "\n{}: every workload has its solution in {}\n", m.name, m.dir);
    else run_child(method_command(o, m, budget, names));

    const std::string run = evaluation_run_id(m, o, all_names);
    results::ResultStore store = results::ResultStore::open(db);
    const std::optional<results::RunInfo> earlier = store.run(run);
    if (!earlier || !earlier->finished) {
      std::vector<std::string> argv = {self, "eval", "--backend", std::string(ir::target_name(o.backend)), "-s", m.dir,
                                       "--baseline", o.baseline, "--db", db, "--run", run, "--json",
                                       (fs::path(o.out) / (fs::path(m.dir).filename().string() + ".results.json")).string()};
      if (o.min_time_s > 0) argv.insert(argv.end(), {"--min-time", fmt::format("{}", o.min_time_s)});
      if (!o.shard.whole()) argv.insert(argv.end(), {"--shard", o.shard.text()});
      argv.insert(argv.end(), all_names.begin(), all_names.end());
      run_child(argv);
    } else {
      fmt::print(stderr, "\n{}: its solutions were evaluated already (run {})\n", m.name, run);
    }
    const std::optional<results::RunInfo> evaluated = store.run(run);
    if (!evaluated || !evaluated->finished) {
      fmt::print("\n{}: shard {} done; run {} waits for the other shards\n", m.name, o.shard.text(), run);
      continue;
    }
    reports.push_back(score_method(results::build_run_report(store, run, ctx.suite())));
  }
  // The comparison once every method's evaluation is whole: the last shard to finish prints it.
  if (reports.size() == methods.size()) print_comparison(methods, reports, o);
}

}  // namespace

void add_experiment_command(CLI::App& app, Context& ctx) {
  auto o = std::make_shared<ExperimentOptions>();
  CLI::App* cmd = app.add_subcommand(
      "experiment", "Every method on the same workloads at the same budget, judged by ekb eval (docs/AGENT.md)");
  cmd->add_option("--methods", o->methods, "Comma-separated: direct, leka:llm, leka:search, agent:NAME")
      ->capture_default_str();
  cmd->add_option("-m,--model", o->model, "The model profile of direct and leka:llm (docs/GENERATION.md); agent:NAME's model");
  cmd->add_option("--models", o->models_path, "The models file (TOML) of direct and leka:llm");
  cmd->add_option("--cache-dir", o->cache_dir, "direct and leka:llm: the response cache root");
  add_target_option(cmd, "-b,--backend", o->backend, "cpu, cuda or opencl");
  cmd->add_option("--budget", o->budget,
                  "Per workload and method, KEY=VALUE joined by commas: evaluations (direct: its samples), wall "
                  "(agent:NAME: its time limit), llm_calls, input_tokens, output_tokens, usd")
      ->capture_default_str();
  cmd->add_option("-o,--out", o->out, "The experiment's directory: a solutions directory per method, results.db")
      ->required();
  cmd->add_option("--baseline", o->baseline, "What speedups are measured against: native, tvm or tvm-tuned")
      ->capture_default_str();
  cmd->add_option("--seed", o->seed, "leka:search's seed")->capture_default_str();
  cmd->add_option("--agent-command", o->agent_command,
                  "agent:NAME: the command run in each workspace (scripts/run_agent.sh --command; docs/AGENTS.md)");
  cmd->add_option("--agent-script", o->agent_script, "agent:NAME: the driver (default: the source tree's scripts/run_agent.sh)");
  cmd->add_option("--min-time", o->min_time_s, "ekb eval's minimum measured time per timing batch, seconds");
  cmd->add_option("--db", o->db, "The results database of the evaluations (default: OUT/results.db; a shared one, "
                                  "postgresql://..., for shards on several machines: docs/SCALE_OUT.md)");
  add_shard_option(cmd, o->shard);
  cmd->add_option("names", o->selection.names, "Globs over PATTERN/WORKLOAD or pattern names");
  add_selection_filters(cmd, o->selection);
  cmd->add_flag("--no-heldout", o->exclude_heldout, "Leave out held-out workloads");
  cmd->callback([&ctx, o] { run_experiment(ctx, *o); });
}

}  // namespace ekb::cli
