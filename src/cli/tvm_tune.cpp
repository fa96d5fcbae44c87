// ekb tvm-tune candidates|select: GPU tuning of TVM's kernels as a batch (docs/TVM.md, "GPU
// tuning"). The GPU machine has no Python and no TVM, so the search is split where the tools are:
//   candidates  (here, with TVM): per workload, sample 0 = TVM's untuned translation and up to K
//               schedules sampled from MetaSchedule's design space, written as a solutions
//               directory (docs/SOLUTIONS.md) with each sample's trace hash in its metadata;
//   `ekb eval -b cuda -s DIR` (on the device): every sample under the full protocol, timed;
//   select      (on the device, C++ only): each workload's fastest correct sample becomes its GPU
//               tuning record, which `--baseline tvm-tuned` and `-s tvm-tuned` use there, and
//               which is portable (one small file per workload, keyed by workload, device,
//               backend and K) to any machine that evaluates on the same device.
// A subcommand rather than an option of `ekb emit --compiler tvm`: emit prints one workload's
// output, while this writes a directory for a selection, and `select` needs no TVM at all.
#include <fmt/core.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cli/commands.h"
#include "runtime/paths.h"
#include "eval/solution_meta.h"
#include "suite/selection.h"
#include "tvm/gpu_tuning.h"
#include "tvm/tvm_compiler.h"

namespace ekb::cli {

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// What `candidates` writes beside the patterns' directories, for `select`.
constexpr std::string_view kTuningFile = "tvm-tuning.json";

struct CandidatesOptions {
  ir::Target backend = ir::Target::Cuda;
  int count = 8;
  int seed = 0;
  std::string out;
  bool skip_untunable = false;  // write nothing for a workload without sampled schedules
  suite::Selection selection;
};

struct SelectOptions {
  std::string results;
  std::string solutions;  // default: the run's solutions directory
  std::string records;    // default: <cache>/tvm-records
};

std::string read_text(const fs::path& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw UsageError("cannot read " + path.string());
  std::ostringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// Sample n of `w` in `out`: its source and its metadata (how it was made, its trace's hash).
void write_sample(const fs::path& out, const suite::WorkloadEntry& w, int n, ir::Target backend,
                  const std::string& source, const std::string& method, const json& extra) {
  const fs::path dir = out / w.pattern->name();
  fs::create_directories(dir);
  const std::string ext = backend == ir::Target::Cuda ? ".cu" : ".cl";
  runtime::write_file_atomically((dir / (w.workload->name + ".s" + std::to_string(n) + ext)).string(), source);
  eval::SolutionMeta meta;
  meta.method = method;
  meta.sample = n;
  meta.backend = std::string(ir::target_name(backend));
  json j = eval::to_json(meta);
  j.update(extra);
  runtime::write_file_atomically((dir / eval::meta_file_name(w.workload->name, n)).string(), j.dump(1) + "\n");
}

void run_candidates(Context& ctx, CandidatesOptions& o) {
  if (!ir::is_gpu(o.backend)) throw UsageError("GPU tuning is for cuda and opencl\n  hint: -b cuda");
  o.selection.include_heldout = true;
  std::vector<suite::WorkloadEntry> selected = selected_workloads(ctx, o.selection);
  const fs::path out(o.out);
  fs::create_directories(out);
  json summary = {{"backend", ir::target_name(o.backend)}, {"candidates", o.count}, {"seed", o.seed},
                  {"workloads", json::object()}};
  // A directory filled by earlier calls (a script calling once per workload) is added to, if the
  // candidates were made alike: K, the seed and the backend are one per directory.
  if (fs::exists(out / kTuningFile)) {
    json before = json::parse(read_text(out / kTuningFile), nullptr, false);
    if (before.is_discarded() || before.value("backend", "") != summary["backend"] ||
        before.value("candidates", 0) != o.count || before.value("seed", -1) != o.seed)
      throw UsageError((out / kTuningFile).string() + " holds candidates made otherwise (backend, K or seed)\n"
                       "  hint: another --out directory");
    summary["workloads"] = before.value("workloads", json::object());
    if (before.contains("tvm_version")) summary["tvm_version"] = before["tvm_version"];
  }
  int with_tuned = 0, written = 0;
  std::string tvm_version;
  for (const auto& w : selected) {
    ir::Instance inst = suite::bind_workload(w);
    json entry;
    tvm::TvmOutput untuned;
    try {
      untuned = tvm::compile(inst, o.backend);
    } catch (const tvm::CompileError& e) {
      // Without sample 0 nothing can be compared: the workload is left out (missing on the device).
      entry["error"] = e.what();
      summary["workloads"][w.full_name()] = entry;
      fmt::print(stderr, "{}: TVM cannot compile it: {}\n", w.full_name(), std::string(e.what()).substr(0, 200));
      continue;
    }
    tvm_version = untuned.tvm_version;
    std::vector<tvm::GpuCandidate> sampled;
    try {
      tvm::GpuCandidates c = tvm::gpu_candidates(inst, o.backend, o.count, o.seed);
      for (auto& cand : c.candidates)
        if (cand.source != untuned.source.text) sampled.push_back(std::move(cand));
      entry = {{"sampled", sampled.size()}, {"sketches", c.sketches}, {"attempts", c.attempts},
               {"rejected", c.rejected}, {"note", c.note}};
      fmt::print(stderr, "{}: {} sampled schedule(s){}\n", w.full_name(), sampled.size(),
                 !c.note.empty()       ? " (" + c.note + ")"
                 : !c.rejected.empty() ? fmt::format(" ({} samples of {} sketches drawn; {})", c.attempts, c.sketches,
                                                     c.rejected)
                                       : "");
    } catch (const tvm::CompileError& e) {
      entry = {{"sampled", 0}, {"note", e.what()}};
      fmt::print(stderr, "{}: no sampled schedules: {}\n", w.full_name(), std::string(e.what()).substr(0, 200));
    }
    if (sampled.empty() && o.skip_untunable) {
      entry["skipped"] = true;
      summary["workloads"][w.full_name()] = entry;
      continue;
    }
    const json common = {{"tvm_version", untuned.tvm_version}, {"candidates", o.count}, {"seed", o.seed}};
    write_sample(out, w, 0, o.backend, untuned.source.text, "tvm:default", common);
    for (size_t i = 0; i < sampled.size(); ++i) {
      json extra = common;
      extra["trace_hash"] = sampled[i].trace_hash;
      extra["trace"] = sampled[i].trace;
      write_sample(out, w, static_cast<int>(i) + 1, o.backend, sampled[i].source, "tvm:metaschedule-sample", extra);
    }
    summary["workloads"][w.full_name()] = entry;
    ++written;
    with_tuned += sampled.empty() ? 0 : 1;
  }
  if (!tvm_version.empty()) summary["tvm_version"] = tvm_version;
  runtime::write_file_atomically((out / kTuningFile).string(), summary.dump(1) + "\n");
  fmt::print("{} of {} workloads written to {} ({} with sampled schedules, K = {}, seed {})\n", written,
             selected.size(), out.string(), with_tuned, o.count, o.seed);
}

double median_ms(const json& r) {
  const json& t = r["time_ms"];
  return t.is_object() ? t.value("median", 0.0) : 0.0;
}

void run_select(SelectOptions& o) {
  json doc = json::parse(read_text(o.results), nullptr, false);
  if (doc.is_discarded() || !doc.contains("results")) throw UsageError(o.results + " is not an `ekb eval` results document");
  const std::string device = doc["device"].value("name", "");
  const std::string backend_name = doc["device"].value("backend", "");
  auto backend = ir::parse_target(backend_name);
  if (!backend || !ir::is_gpu(*backend)) throw UsageError("the run is on " + backend_name + ": GPU tuning is for cuda and opencl");
  const json& options = doc["run"]["options"];
  if (options.is_object() && options.contains("timing") && !options["timing"].get<bool>())
    throw UsageError("the run was not timed (--no-timing): nothing to select by\n  hint: ekb eval -b " + backend_name +
                     " -s DIR without --no-timing");
  if (o.solutions.empty()) o.solutions = doc["run"].value("solutions_dir", "");
  const fs::path dir(o.solutions);
  json tuning = json::parse(read_text(dir / kTuningFile), nullptr, false);
  if (tuning.is_discarded()) throw UsageError((dir / kTuningFile).string() + " is malformed");
  const int count = tuning.value("candidates", 0);
  const std::string tvm_version = tuning.value("tvm_version", "");
  const std::string root = o.records.empty() ? tvm::records_root() : o.records;

  std::map<std::string, std::vector<const json*>> by_workload;
  for (const json& r : doc["results"]) by_workload[r.value("workload", "")].push_back(&r);
  fmt::print("{:<52} {:>11} {:>11} {:>11} {:>7} {:>9} {:>9}\n", "workload", "native ms", "tvm ms", "tuned ms", "sample",
             "vs tvm", "vs native");
  double log_vs_tvm = 0, log_vs_native = 0;
  int compared = 0, records = 0, tuned_better = 0;
  for (const auto& [workload, results] : by_workload) {
    const json* best = nullptr;
    const json* untuned = nullptr;
    for (const json* r : results) {
      if (r->value("sample", -1) == 0) untuned = r;
      if (!r->value("correct", false) || median_ms(*r) <= 0) continue;
      if (!best || median_ms(*r) < median_ms(*best)) best = r;
    }
    if (!best) {
      fmt::print("{:<52} no correct timed sample: no record\n", workload);
      continue;
    }
    tvm::GpuTuningRecord record;
    record.workload = workload;
    record.device = device;
    record.backend = backend_name;
    record.candidates = count;
    record.sample = best->value("sample", 0);
    record.tvm_version = tvm_version;
    record.time_ms = median_ms(*best);
    record.default_time_ms = untuned && untuned->value("correct", false) ? median_ms(*untuned) : 0.0;
    record.run = doc["run"].value("id", "");
    const std::string solution = best->value("solution", "");
    record.source = read_text(dir / solution);
    const fs::path meta = dir / fs::path(solution).parent_path() /
                          eval::meta_file_name(workload.substr(workload.find('/') + 1), record.sample);
    if (fs::exists(meta)) {
      json m = json::parse(read_text(meta), nullptr, false);
      if (!m.is_discarded()) record.trace_hash = m.value("trace_hash", "");
    }
    tvm::write_gpu_record(root, record);
    ++records;
    tuned_better += record.sample > 0 ? 1 : 0;
    const double native_ms = (*best)["baseline_ms"].is_object() ? (*best)["baseline_ms"].value("median", 0.0) : 0.0;
    const double vs_tvm = record.default_time_ms > 0 ? record.default_time_ms / record.time_ms : 0;
    const double vs_native = best->contains("speedup") && (*best)["speedup"].is_number() ? (*best)["speedup"].get<double>() : 0;
    fmt::print("{:<52} {:>11.4f} {:>11.4f} {:>11.4f} {:>7} {:>8.2f}x {:>8.2f}x\n", workload, native_ms,
               record.default_time_ms, record.time_ms, record.sample, vs_tvm, vs_native);
    if (vs_tvm > 0 && vs_native > 0) {
      log_vs_tvm += std::log(vs_tvm);
      log_vs_native += std::log(vs_native);
      ++compared;
    }
  }
  if (compared)
    fmt::print("\ngeomean over {} workloads: tuned {:.2f}x TVM default, {:.2f}x native default\n", compared,
               std::exp(log_vs_tvm / compared), std::exp(log_vs_native / compared));
  fmt::print("{} records for {} ({}, K = {}) written to {}; {} of them a sampled schedule, the rest TVM's untuned "
             "translation\n",
             records, device, backend_name, count, root, tuned_better);
}

}  // namespace

void add_tvm_tune_command(CLI::App& app, Context& ctx) {
  CLI::App* cmd = app.add_subcommand(
      "tvm-tune", "GPU tuning of TVM's kernels as a batch: sample candidates here, evaluate them on the device, select (docs/TVM.md)");
  cmd->require_subcommand(1);

  auto c = std::make_shared<CandidatesOptions>();
  CLI::App* gen = cmd->add_subcommand(
      "candidates", "Write per workload TVM's untuned translation (sample 0) and K schedules sampled from MetaSchedule's "
                    "design space (samples 1..) as a solutions directory (needs the TVM environment)");
  add_target_option(gen, "-b,--backend", c->backend, "cuda or opencl")->capture_default_str();
  gen->add_option("-k,--candidates", c->count, "Sampled schedules per workload (K; duplicates dropped)")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  gen->add_option("--seed", c->seed, "The sampling's seed")->capture_default_str();
  gen->add_option("-o,--out", c->out, "The solutions directory to write")->required();
  gen->add_flag("--skip-untunable", c->skip_untunable,
                "Write nothing for a workload without sampled schedules (no block form): sample 0 alone tunes nothing");
  gen->add_option("names", c->selection.names, "Globs over PATTERN/WORKLOAD or pattern names (default: all)");
  add_selection_filters(gen, c->selection);
  gen->callback([&ctx, c] { run_candidates(ctx, *c); });

  auto s = std::make_shared<SelectOptions>();
  CLI::App* sel = cmd->add_subcommand(
      "select", "From a timed `ekb eval -s DIR` run of the candidates, keep each workload's fastest correct sample as its "
                "GPU tuning record (needs no TVM)");
  sel->add_option("results", s->results, "The run's results document (ekb-results-RUN.json)")->required();
  sel->add_option("--solutions", s->solutions, "The candidates' directory (default: the run's solutions directory)");
  sel->add_option("--records", s->records, "Where the records go (default: <cache dir>/tvm-records)");
  sel->callback([s] { run_select(*s); });
}

}  // namespace ekb::cli
