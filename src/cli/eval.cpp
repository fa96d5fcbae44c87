// ekb eval: evaluate a solutions directory against the baseline on a selection of the suite,
// storing every result as it completes (a killed run resumes), then write the results JSON and
// print the report.
#include <fmt/core.h>
#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <thread>
#include <map>
#include <optional>
#include <set>

#include "cli/commands.h"
#include "cli/devices.h"
#include "cli/progress.h"
#include "cli/report.h"
#include "cli/results_db.h"
#include "eval/candidate_evaluation.h"
#include "eval/remote_session.h"
#include "results/results_json.h"
#include "runtime/cpu_target.h"
#include "suite/selection.h"
#include "tvm/gpu_tuning.h"

namespace ekb::cli {

namespace {

struct EvalCommandOptions {
  ir::Target backend = ir::Target::Cpu;
  runtime::BackendOptions backend_options;  // opencl: the platform, device and build options
  std::string solutions;
  suite::Selection selection;
  bool exclude_heldout = false;
  bool solved_only = false;
  std::string db;
  std::string run;
  std::string json;
  int trials = 3;
  double min_time_s = eval::TimingOptions{}.min_time_s;
  double call_timeout_s = eval::EvalOptions{}.call_timeout_s;
  bool timing = true;
  int failures = 10;
  bool reference_cache = true;
  std::string baseline = "native";
  int tune_trials = eval::kDefaultTuneTrials;
  std::string device_name;   // --device NAME: a remote device of the devices file
  std::string devices_file;  // --devices
  eval::Shard shard;         // --shard I/N
};

// The exit code of a run stopped because its remote device stayed away past its `wait`: the run
// is unfinished, and the same command resumes it (EX_TEMPFAIL).
constexpr int kDeviceGoneExit = 75;
// Losses of the device while one candidate runs before the run stops.
constexpr int kMaxLossesPerCandidate = 3;

nlohmann::json selection_json(const EvalCommandOptions& o, const std::vector<suite::WorkloadEntry>& selected) {
  const suite::Selection& s = o.selection;
  nlohmann::json j = {{"names", s.names},     {"domains", s.domains}, {"levels", s.levels},
                      {"dtypes", s.dtypes},   {"sizes", s.sizes},     {"heldout", s.include_heldout}};
  std::vector<std::string> names;
  for (const auto& w : selected) names.push_back(w.full_name());
  j["workloads"] = names;
  return j;
}

// The machine's 1-minute load average, or a negative number where /proc/loadavg is unreadable.
double load_average() {
  double load = -1;
  if (std::FILE* f = std::fopen("/proc/loadavg", "r")) {
    if (std::fscanf(f, "%lf", &load) != 1) load = -1;
    std::fclose(f);
  }
  return load;
}

std::string outcome_text(const eval::CandidateResult& r) {
  std::string who = r.workload + " " + r.solution + (r.sample ? fmt::format("#{}", r.sample) : "");
  if (r.correct && r.speedup) return fmt::format("{}  correct {:.2f}x", who, *r.speedup);
  if (r.correct) return who + "  correct";
  return fmt::format("{}  {}", who, eval::error_kind_name(r.error));
}

void run_eval(Context& ctx, EvalCommandOptions& o) {
  o.selection.include_heldout = !o.exclude_heldout;
  std::vector<suite::WorkloadEntry> selected = selected_workloads(ctx, o.selection);

  std::optional<DeviceConnection> remote;
  if (!o.device_name.empty()) {
    remote.emplace();
    remote->device = find_device(o.devices_file, o.device_name);
    const auto& offered = remote->device.backends;
    if (std::find(offered.begin(), offered.end(), std::string(ir::target_name(o.backend))) == offered.end())
      throw UsageError(fmt::format("device {} offers no {} backend (backends: {})", o.device_name,
                                   ir::target_name(o.backend), fmt::join(offered, ", ")));
    if (o.backend != ir::Target::Cpu) throw UsageError("a remote device runs the cpu backend only, for now");
    if (o.backend_options.cpu_target) throw UsageError("--target comes from the device's `triple` with --device NAME");
    if (!remote->device.triple.empty() && remote->device.triple != runtime::build_triple())
      o.backend_options.cpu_target = remote->device.triple;
    remote->open();
  } else if (!o.devices_file.empty()) {
    throw UsageError("--devices names the file of remote devices; --device NAME picks one");
  }
  std::unique_ptr<runtime::Backend> backend = make_cli_backend(o.backend, o.backend_options);
  std::vector<eval::CandidateRef> candidates;
  try {
    candidates = eval::find_candidates(o.solutions, selected, backend->target());
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }

  if (o.solved_only) {
    // Narrow the selection itself, so that the denominators of Correct@k and Fast@p follow.
    std::erase_if(candidates, [](const eval::CandidateRef& c) { return c.missing(); });
    std::set<std::string> solved;
    for (const auto& c : candidates) solved.insert(c.workload.full_name());
    std::erase_if(selected, [&](const suite::WorkloadEntry& w) { return !solved.count(w.full_name()); });
    if (selected.empty()) throw UsageError("no selected workload has a solution in " + o.solutions);
  }
  // A shard evaluates its part; the selection (the denominators) stays the whole run's, so the
  // shards' runs have equal parameters.
  std::erase_if(candidates,
                [&](const eval::CandidateRef& c) { return !o.shard.owns(c.workload.full_name(), c.sample); });

  eval::BaselineSpec baseline_spec;
  if (auto compiler = eval::parse_baseline_compiler(o.baseline)) baseline_spec.compiler = *compiler;
  else
    throw UsageError(fmt::format("unknown baseline '{}'\n  hint: --baseline takes one of {}", o.baseline,
                                 eval::baseline_compiler_names()));
  baseline_spec.tune_trials = o.tune_trials;
  const bool tuning = baseline_spec.compiler == eval::BaselineCompiler::TvmTuned || o.solutions == "tvm-tuned";
  for (auto& c : candidates)
    if (c.tune_trials > 0) c.tune_trials = o.tune_trials;
  if (tuning && ir::is_gpu(o.backend)) {
    // On cuda and opencl tvm-tuned is a GPU tuning's record (docs/TVM.md, "GPU tuning"), made
    // beforehand for this device: without one for every selected workload the run is refused.
    const std::string device_name = backend->device_info().name;
    baseline_spec.device = device_name;
    for (auto& c : candidates)
      if (c.tvm) c.device = device_name;
    std::vector<std::string> missing;
    for (const auto& w : selected)
      if (!tvm::read_gpu_record(tvm::records_root(), w.full_name(), device_name, o.backend, o.tune_trials))
        missing.push_back(w.full_name());
    if (!missing.empty())
      throw UsageError(fmt::format(
          "tvm-tuned on {} needs a GPU tuning record per workload for {} with {} candidates; {} of {} have none "
          "(first: {})\n  hint: make them with {} and `ekb tvm-tune select` (docs/TVM.md, \"GPU tuning\"), or "
          "--tune-trials with the candidate count they were made with",
          ir::target_name(o.backend), device_name, o.tune_trials, missing.size(), selected.size(), missing.front(),
          tvm::kGpuTuneScript));
  }

  // A remote device is emulated when its file says so, whatever its triple; a local cross target always is.
  const bool emulated = remote ? remote->device.emulated : backend->device_info().emulated;
  if (emulated && o.timing) {
    // Times under an emulator measure the emulator: the run is a correctness run, and says so.
    fmt::print(stderr, "note: {}: correctness only, nothing is timed (--no-timing)\n",
               remote ? remote->key() : backend->device_info().name);
    o.timing = false;
  }

  eval::EvalOptions options;
  options.trials = o.trials;
  options.timing.min_time_s = o.min_time_s;
  options.call_timeout_s = o.call_timeout_s;
  options.time = o.timing;
  if (remote) options.session = eval::remote_session_factory(remote->link);

  const runtime::DeviceInfo& device = backend->device_info();
  results::RunSpec spec;
  spec.id = o.run;
  spec.backend = std::string(backend->name());
  spec.device = {{"backend", device.backend}, {"name", device.name}, {"compiler", device.compiler}};
  if (!device.target.empty()) {  // only then: a host run's device, and so its run id, stay what they were
    spec.device["target"] = device.target;
    spec.device["emulated"] = device.emulated;
  }
  if (remote) {  // the device's own facts: a run on one board never resumes on another
    spec.device["name"] = remote->key();
    spec.device["remote"] = remote->device.name;
    spec.device["target"] = remote->device.triple.empty() ? remote->identity.value("triple", "") : remote->device.triple;
    spec.device["emulated"] = remote->device.emulated;
    spec.device["facts"] = remote->identity;
  }
  spec.options = {{"trials", o.trials}, {"min_time_s", o.min_time_s}};
  // Only when changed, so that the run ids derived from the default options stay what they were.
  if (o.call_timeout_s != eval::EvalOptions{}.call_timeout_s) spec.options["call_timeout_s"] = o.call_timeout_s;
  if (!o.timing) spec.options["timing"] = false;
  if (baseline_spec.compiler != eval::BaselineCompiler::Native) spec.options["baseline"] = o.baseline;
  if (tuning) spec.options["tune_trials"] = o.tune_trials;
  spec.solutions_dir = o.solutions == "native" || o.solutions == "tvm" || o.solutions == "tvm-tuned" ? o.solutions
                                               : std::filesystem::absolute(o.solutions).lexically_normal().string();
  spec.selection = selection_json(o, selected);
  spec.sharded = !o.shard.whole();

  results::ResultStore store = results::ResultStore::open(o.db);
  std::string run = store.begin_or_resume_run(spec);
  if (!o.shard.whole()) store.begin_shard(run, o.shard, static_cast<int>(candidates.size()), host_name());
  std::set<results::ResultKey> done = store.done(run);
  auto key_of = [](const eval::CandidateRef& c) {
    return results::ResultKey{c.workload.full_name(), c.solution.empty() ? "(none)" : c.solution, c.sample};
  };
  int already = 0;
  for (const auto& c : candidates) already += done.count(key_of(c)) ? 1 : 0;
  fmt::print(stderr, "run {}{}: {} candidates for {} workloads on {} ({}){}\n", run,
             o.shard.whole() ? "" : " shard " + o.shard.text(), candidates.size(), selected.size(), backend->name(),
             spec.device["name"].get<std::string>(), already ? fmt::format(", resuming with {} done", already) : "");

  std::optional<eval::ReferenceCache> reference_cache;
  if (o.reference_cache) reference_cache = eval::ReferenceCache::default_cache();

  Progress progress(static_cast<int>(candidates.size()), already);
  // Other processes competing for the cores disturb timings, parallel kernels' most of all: the
  // evaluation itself keeps about one core busy, so a load well above that is worth a warning.
  double max_load = load_average();
  // Candidates come grouped by workload: bind it and compute its references once for all of them.
  std::string current;
  std::unique_ptr<ir::Instance> inst;
  std::unique_ptr<eval::WorkloadReference> reference;
  std::optional<eval::Baseline> baseline;
  for (const auto& c : candidates) {
    if (done.count(key_of(c))) continue;
    std::optional<eval::CandidateResult> r =
        eval::result_without_code(c, backend->name(), "no solution in " + o.solutions);
    if (!r) {
      if (c.workload.full_name() != current) {
        current = c.workload.full_name();
        reference.reset();
        inst = std::make_unique<ir::Instance>(suite::bind_workload(c.workload));
        reference = std::make_unique<eval::WorkloadReference>(*inst, eval::kDefaultBaseSeed,
                                                              reference_cache ? &*reference_cache : nullptr);
        baseline = eval::make_baseline(*inst, backend->target(), baseline_spec);
      }
      r = eval::evaluate_candidate(*backend, *reference, *baseline, c, options);
      // A device lost on the way: nothing of this result is the candidate's. It is evaluated again
      // from scratch once the device is back; past the device's wait the run stops unfinished, and
      // so it does when the device goes every time this candidate runs (one that brings it down:
      // trying forever would never end, and storing a verdict would blame it for the device).
      for (int losses = 1; remote && (remote->link->lost() || r->error == eval::ErrorKind::Device); ++losses) {
        const bool again = losses < kMaxLossesPerCandidate && remote->reconnect(r->message);
        if (!again) {
          progress.finish();
          if (losses >= kMaxLossesPerCandidate)
            fmt::print(stderr, "device {}: lost {} times while evaluating {} {}\n", remote->device.name, losses,
                       c.workload.full_name(), c.solution);
          fmt::print(stderr, "run {} is unfinished ({} of {} candidates stored); the same `ekb eval` command resumes it\n",
                     run, store.done(run).size(), candidates.size());
          g_exit_code = kDeviceGoneExit;
          return;
        }
        r = eval::evaluate_candidate(*backend, *reference, *baseline, c, options);
      }
    }
    store.add(run, *r);
    progress.step(outcome_text(*r));
    max_load = std::max(max_load, load_average());
  }
  progress.finish();
  // This machine's load says nothing of a remote device's: only a local run records it.
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  if (remote) max_load = -1;
  if (max_load >= 0) store.record_load(run, max_load, cores);
  if (o.shard.whole()) {
    store.finish_run(run);
  } else if (!store.finish_shard(run, o.shard)) {
    // The run's report waits for its last shard; `ekb slurm status` and `ekb report` show it meanwhile.
    fmt::print("shard {} of run {} finished: {} candidates stored; other shards are still running\n",
               o.shard.text(), run, candidates.size());
    return;
  }

  std::string json = o.json.empty() ? "ekb-results-" + run + ".json" : o.json;
  results::write_results_json(store, run, json, &ctx.suite());
  fmt::print("\n");
  print_run_report(ctx.suite(), store, run, {}, o.failures);
  if (max_load > cores - 0.5)
    fmt::print("\nwarning: the load average reached {:.1f} on {} cores during this run: other processes "
               "competed for the CPU, so timings (of parallel kernels above all) are less reliable\n",
               max_load, cores);
  fmt::print("\nresults: {} (database {}, `ekb report {}` shows them again)\n", json, o.db, run);
}

}  // namespace

void add_eval_command(CLI::App& app, Context& ctx) {
  auto o = std::make_shared<EvalCommandOptions>();
  CLI::App* cmd = app.add_subcommand("eval", "Evaluate solutions against the baseline: correctness, speed, report");
  add_target_option(cmd, "-b,--backend", o->backend, "cpu, cuda or opencl");
  add_opencl_options(cmd, o->backend_options, &o->device_name);
  cmd->add_option("--devices", o->devices_file,
                  "The remote devices' file for --device NAME (default: $EKB_DEVICES, else ./ekb-devices.toml; docs/DEVICES.md)");
  add_cpu_target_option(cmd, o->backend_options);
  cmd->add_option("-s,--solutions", o->solutions,
                  "Solutions directory (docs/SOLUTIONS.md), 'native' for the default lowering itself, 'tvm' for TVM's "
                  "compilation of each workload, or 'tvm-tuned' for TVM's compilation tuned by MetaSchedule (cpu; docs/TVM.md)")
      ->required();
  cmd->add_option("--baseline", o->baseline,
                  "What speedups and Fast@p are measured against: native (the native compiler's default lowering), tvm "
                  "(TVM's compilation of the workload) or tvm-tuned (TVM with MetaSchedule's schedule; docs/TVM.md)")
      ->capture_default_str();
  cmd->add_option("--tune-trials", o->tune_trials,
                  "tvm-tuned: MetaSchedule's trial budget per workload; its records are kept in the cache, so a workload is "
                  "tuned once per device (cuda, opencl: the candidate count of the GPU tuning records, docs/TVM.md)")
      ->check(CLI::Range(1, 100000))
      ->capture_default_str();
  cmd->add_option("names", o->selection.names, "Globs over PATTERN/WORKLOAD or pattern names (default: all)");
  add_selection_filters(cmd, o->selection);
  cmd->add_flag("--no-heldout", o->exclude_heldout, "Leave out held-out workloads");
  cmd->add_flag("--solved-only", o->solved_only,
                "Select only the workloads that have a solution (otherwise they count as failed: missing)");
  add_db_option(cmd, o->db);
  cmd->add_option("--run", o->run, "Run id: resumes that run if it is unfinished (default: derived from the parameters)");
  add_shard_option(cmd, o->shard);
  cmd->add_option("--json", o->json, "Results document path (default: ekb-results-RUN.json)");
  cmd->add_option("--trials", o->trials, "Random-input correctness trials before timing")
      ->check(CLI::Range(3, 100))
      ->capture_default_str();
  cmd->add_flag("!--no-timing", o->timing,
                "Correctness only: compile and check every candidate, time nothing (no speedups, Fast@p)");
  cmd->add_option("--min-time", o->min_time_s, "Minimum measured time per timing batch, seconds")
      ->check(CLI::Range(0.01, 60.0))
      ->capture_default_str();
  cmd->add_option("--call-timeout", o->call_timeout_s,
                  "Time limit of one kernel call, seconds (a slow baseline on a large workload may need more; 20 times this under an emulator)")
      ->check(CLI::Range(1.0, 600.0))
      ->capture_default_str();
  cmd->add_flag("!--no-reference-cache", o->reference_cache,
                "Recompute every reference output instead of reading those stored by earlier runs "
                "(<cache dir>/reference, bounded by $EKB_REFERENCE_CACHE_MB, default 4096)");
  cmd->add_option("--failures", o->failures, "Failures listed per error kind in the report (-1: all)")
      ->capture_default_str();
  cmd->callback([&ctx, o] { run_eval(ctx, *o); });
}

}  // namespace ekb::cli
