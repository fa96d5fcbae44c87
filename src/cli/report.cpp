// ekb report RUN...: a run's scores by domain and level, its failures by error kind, a CSV and JSON
// export of every result, two runs compared (--compare), and an HTML page of them all (--html).
#include <fmt/core.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <map>

#include "cli/commands.h"
#include "cli/report.h"
#include "cli/results_db.h"
#include "eval/solution_meta.h"
#include "results/html_report.h"
#include "results/results_csv.h"
#include "runtime/paths.h"
#include "results/results_json.h"
#include "results/run_report.h"

namespace ekb::cli {

namespace {

struct ReportOptions {
  std::vector<std::string> runs;
  std::string html;
  bool compare = false;
  std::string db;
  std::string csv;
  std::string json;
  std::vector<std::string> by;
  int failures = 10;
};

std::string times(std::optional<double> v) { return v ? fmt::format("{:.2f}x", *v) : "-"; }

// A run with --no-timing measured no speedups: its Fast@p is unknown ("-"), not 0%.
std::optional<double> fast(const std::map<double, double>& fast_at, double p, bool timed) {
  if (!timed) return std::nullopt;
  return fast_at.at(p);
}

// First line, whitespace collapsed, at most `width` characters: compiler logs can be pages long.
std::string shorten(const std::string& message, size_t width = 110) {
  std::string line = message.substr(0, message.find('\n'));
  std::string out;
  for (char c : line) {
    if (std::isspace(static_cast<unsigned char>(c))) {
      if (!out.empty() && out.back() != ' ') out += ' ';
    } else {
      out += c;
    }
  }
  bool more_lines = line.size() < message.size() && message.find_first_not_of(" \t\r\n", line.size()) != std::string::npos;
  if (out.size() > width) out = out.substr(0, width - 3) + "...";
  else if (more_lines) out += " ...";
  return out;
}

void print_table(const std::string& title, const std::vector<results::GroupSummary>& groups,
                 const eval::Summary& total, bool timed) {
  fmt::print("\nby {}\n", title);
  fmt::print("  {:<22} {:>9} {:>6} {:>8} {:>7} {:>9} {:>8} {:>8} {:>8} {:>8}\n", title, "WORKLOADS", "N",
             "COMPILED", "CORRECT", "CORRECT@1", "FAST@1.0", "FAST@1.5", "GEOMEAN", "ROOFLINE");
  auto row = [timed](const std::string& key, const eval::Summary& s) {
    fmt::print("  {:<22} {:>9} {:>6} {:>8} {:>7} {:>9} {:>8} {:>8} {:>8} {:>8}\n", key, s.workloads, s.n,
               s.compiled, s.correct, percent(s.correct_at_k.at(1)), percent(fast(s.fast_at, 1.0, timed)),
               percent(fast(s.fast_at, 1.5, timed)), times(s.geomean_speedup), percent(s.median_roofline_fraction));
  };
  for (const auto& g : groups) row(g.key, g.summary);
  row("all", total);
}

// Each sample index on its own (KernelBench's one-shot numbers are sample 0's).
void print_samples(const eval::Summary& total, bool timed) {
  fmt::print("\nby sample index (each over all workloads)\n");
  fmt::print("  {:<8} {:>8}", "SAMPLE", "CORRECT");
  for (double p : eval::kFastThresholds) fmt::print(" {:>8}", "FAST@" + eval::threshold_key(p));
  fmt::print("\n");
  for (const auto& [sample, scores] : total.by_sample) {
    fmt::print("  {:<8} {:>8}", fmt::format("s{}", sample), percent(scores.correct));
    for (double p : eval::kFastThresholds) fmt::print(" {:>8}", percent(fast(scores.fast_at, p, timed)));
    fmt::print("\n");
  }
}

// Scores and the budget ledger per method, so methods are compared at equal cost.
void print_methods(const std::vector<results::GroupSummary>& methods, bool timed) {
  fmt::print("\nby method (ledger: what producing the solutions cost, from their .meta.json)\n");
  fmt::print("  {:<22} {:>6} {:>9} {:>8} {:>9} {:>10} {:>10} {:>9} {:>6} {:>9}\n", "METHOD", "N", "CORRECT@1",
             "FAST@1.0", "LLM CALLS", "IN TOKENS", "OUT TOKENS", "COST USD", "EVALS", "WALL S");
  for (const auto& [method, s] : methods) {
    if (s.ledgered == 0) {
      fmt::print("  {:<22} {:>6} {:>9} {:>8} {:>9}\n", method, s.n, percent(s.correct_at_k.at(1)),
                 percent(fast(s.fast_at, 1.0, timed)), "-");
      continue;
    }
    const eval::Ledger& l = s.ledger;
    fmt::print("  {:<22} {:>6} {:>9} {:>8} {:>9} {:>10} {:>10} {:>9.4f} {:>6} {:>9.1f}\n", method, s.n,
               percent(s.correct_at_k.at(1)), percent(fast(s.fast_at, 1.0, timed)), l.llm_calls, l.input_tokens,
               l.output_tokens, l.cost_usd, l.evaluations, l.wall_s);
  }
}

void print_failures(const results::RunReport& report, int limit) {
  std::map<std::string, std::vector<const results::ScoredResult*>> by_kind;
  for (const auto& r : report.rows)
    if (!r.result.correct) by_kind[std::string(eval::error_kind_name(r.result.error))].push_back(&r);
  size_t total = 0;
  for (const auto& [kind, rows] : by_kind) total += rows.size();
  if (total == 0) {
    fmt::print("\nno failures\n");
    return;
  }
  fmt::print("\nfailures ({})\n", total);
  for (const auto& [kind, rows] : by_kind) {
    fmt::print("  {} ({})\n", kind, rows.size());
    for (size_t i = 0; i < rows.size() && (limit < 0 || i < static_cast<size_t>(limit)); ++i) {
      const eval::CandidateResult& r = rows[i]->result;
      fmt::print("    {} {}#{}: {}\n", r.workload, r.solution, r.sample, shorten(r.message));
    }
    if (limit >= 0 && rows.size() > static_cast<size_t>(limit))
      fmt::print("    ... and {} more (--failures -1 lists all; --csv exports every row)\n", rows.size() - limit);
  }
}

// Where each result's transcript is, for the methods that leave one (LEKA's trajectory, an
// external agent's session): the `transcript` of its .meta.json, beside it in the solutions dir.
void print_transcripts(const results::RunReport& report, int limit) {
  namespace fs = std::filesystem;
  const std::string& dir = report.run.solutions_dir;
  if (dir.empty() || !fs::is_directory(dir)) return;
  std::vector<std::pair<std::string, std::string>> found;  // workload, path
  for (const auto& row : report.rows) {
    const eval::CandidateResult& r = row.result;
    if (!r.provenance) continue;
    const fs::path pattern_dir = fs::path(dir) / r.task;
    const std::string workload = r.workload.substr(r.workload.find('/') + 1);
    try {
      const eval::SolutionMeta meta = eval::read_solution_meta((pattern_dir / eval::meta_file_name(workload, r.sample)).string());
      if (!meta.transcript.empty() && fs::exists(pattern_dir / meta.transcript))
        found.emplace_back(r.workload, (pattern_dir / meta.transcript).string());
    } catch (const std::exception&) {
      // metadata that went missing since the run: no transcript to show
    }
  }
  if (found.empty()) return;
  fmt::print("\ntranscripts ({}; `ekb trajectory show PATH` prints LEKA's as a table)\n", found.size());
  for (size_t i = 0; i < found.size() && (limit < 0 || i < static_cast<size_t>(limit)); ++i)
    fmt::print("  {:<48} {}\n", found[i].first, found[i].second);
  if (limit >= 0 && found.size() > static_cast<size_t>(limit))
    fmt::print("  ... and {} more (--failures -1 lists all)\n", found.size() - limit);
}

// What the speedups were measured against: one line per distinct baseline (a tuned baseline may
// have fallen back to the untuned translation for some workloads, each saying why).
void print_baselines(const results::RunReport& report) {
  std::map<std::string, int> count;
  for (const auto& row : report.rows) ++count[row.result.baseline_info.describe()];
  if (count.size() == 1) {
    fmt::print("  baseline {}\n", count.begin()->first);
    return;
  }
  for (const auto& [what, n] : count) fmt::print("  baseline {} ({} results)\n", what, n);
}

}  // namespace

std::string percent(std::optional<double> share) { return share ? fmt::format("{:.1f}%", *share * 100) : "-"; }

results::RunReport print_run_report(const suite::Suite& suite, const results::ResultStore& store,
                                    const std::string& run_id, std::vector<results::GroupBy> groupings,
                                    int failures) {
  if (groupings.empty()) groupings = {results::GroupBy::Domain, results::GroupBy::Level};
  results::RunReport report;
  try {
    report = results::build_run_report(store, run_id, suite);
  } catch (const results::StoreError& e) {
    throw UsageError(e.what());
  }
  const results::RunInfo& run = report.run;
  std::string compiler;
  if (run.device.contains("compiler") && !run.device["compiler"].is_null())
    compiler = " with " + (run.device["compiler"].is_string() ? run.device["compiler"].get<std::string>()
                                                               : run.device["compiler"].dump());
  fmt::print("run {}: {} on {}{}\n", run.id, run.backend, run.device_name().empty() ? "?" : run.device_name(), compiler);
  fmt::print("  created {}, {}\n", run.created, run.finished ? "finished " + *run.finished : "unfinished");
  if (!run.solutions_dir.empty()) fmt::print("  solutions {}\n", run.solutions_dir);
  print_baselines(report);
  fmt::print("  {} results over {} workloads (samples per workload {}..{})\n", report.summary.n,
             report.summary.workloads, report.summary.min_samples, report.summary.max_samples);
  if (report.calibration)
    fmt::print("  roofline: {:.1f} GB/s{}, {:.1f} GFLOP/s (calibrated {})\n", report.calibration->bandwidth_gbs.best,
               report.calibration->read_bandwidth_gbs.runs > 0
                   ? fmt::format(" (reads alone {:.1f})", report.calibration->read_bandwidth_gbs.best)
                   : "",
               report.calibration->peak_gflops.best, report.calibration->created);
  else if (run.device.value("emulated", false))
    fmt::print("  roofline: none (an emulated device's times measure the emulator)\n");
  else if (const std::string remote = run.device.value("remote", ""); !remote.empty())
    fmt::print("  roofline: no calibration for this device; `ekb calibrate --device {}` measures one there\n", remote);
  else
    fmt::print("  roofline: no calibration for this device; `ekb calibrate --backend {}` measures one\n", run.backend);

  const bool timed = run.timed();
  const std::vector<std::string> devices = report.devices();
  if (devices.size() > 1) {
    // Shards on different machines: each result was measured against its own machine's baseline,
    // so the table by device is what compares like with like.
    fmt::print("  {} devices (sharded run): {}\n", devices.size(), fmt::join(devices, "; "));
    if (std::find(groupings.begin(), groupings.end(), results::GroupBy::Device) == groupings.end())
      groupings.push_back(results::GroupBy::Device);
  }
  for (results::GroupBy g : groupings)
    print_table(std::string(results::group_by_name(g)), report.by(g), report.summary, timed);
  const auto& s = report.summary;
  fmt::print("\nFast@p  ");
  for (double p : eval::kFastThresholds)
    fmt::print("  {}: {}", eval::threshold_key(p), percent(fast(s.fast_at, p, timed)));
  fmt::print("{}\n", timed ? "" : "  (--no-timing: nothing was timed)");
  if (s.max_samples > 1) {
    fmt::print("best of n");
    for (double p : eval::kFastThresholds)
      fmt::print("  {}: {}", eval::threshold_key(p), percent(fast(s.fast_at_best_of_n, p, timed)));
    fmt::print("\nCorrect@k");
    for (const auto& [k, v] : s.correct_at_k) fmt::print("  @{}: {}", k, percent(v));
    fmt::print("\n");
    print_samples(s, timed);
  }
  if (s.ledgered > 0) print_methods(report.by_method(), timed);
  print_transcripts(report, failures);
  print_failures(report, failures);
  return report;
}

namespace {

// `--compare A B`: per workload, what changed from A to B.
void print_comparison(const results::RunReport& a, const results::RunReport& b) {
  const auto rows = results::compare_runs(a, b);
  std::map<std::string, int> counts;
  for (const auto& c : rows) ++counts[c.change];
  fmt::print("\ncompare {} (A) -> {} (B): {} workloads", a.run.id, b.run.id, rows.size());
  for (const auto& [change, n] : counts) fmt::print(", {} {}", change, n);
  fmt::print("\n  {:<56} {:<14} {:>9} {:>9} {:>8}\n", "workload", "change", "A", "B", "B/A");
  for (const auto& c : rows) {
    const std::optional<double> ratio = c.ratio();
    fmt::print("  {:<56} {:<14} {:>9} {:>9} {:>8}\n", c.workload, c.change, times(c.speedup_a), times(c.speedup_b),
               times(ratio));
  }
}

void run_report(Context& ctx, const ReportOptions& o) {
  std::vector<results::GroupBy> groupings;
  for (const auto& b : o.by) groupings.push_back(*results::parse_group_by(b));
  if ((!o.csv.empty() || !o.json.empty()) && o.runs.size() != 1) throw UsageError("--csv and --json export one run");
  if (o.compare && o.runs.size() != 2) throw UsageError("--compare takes two runs: ekb report --compare RUN_A RUN_B");
  results::ResultStore store = open_existing_store(o.db);
  std::vector<results::RunReport> reports;
  for (const std::string& run : o.runs) {
    if (!reports.empty()) fmt::print("\n");
    reports.push_back(print_run_report(ctx.suite(), store, run, groupings, o.failures));
  }
  const results::RunInfo& run = reports.front().run;

  if (!o.csv.empty()) {
    std::ofstream out(o.csv);
    results::write_results_csv(reports.front(), out);
    if (!out) throw std::runtime_error("cannot write " + o.csv);
    fmt::print("\nwrote {} rows to {}\n", reports.front().rows.size(), o.csv);
  }
  if (!o.json.empty()) {
    results::write_results_json(store, run.id, o.json, &ctx.suite());
    fmt::print("wrote {}\n", o.json);
  }
  if (o.compare) print_comparison(reports[0], reports[1]);
  if (!o.html.empty()) {
    const std::string library_path = results::default_chart_library_path();
    std::ifstream in(library_path);
    if (!in)
      throw std::runtime_error("cannot read the charting library " + library_path +
                               " (Debian's libjs-d3: scripts/install-deps.sh installs it; $EKB_D3_JS names another copy)");
    results::HtmlReportOptions html;
    html.chart_library.assign(std::istreambuf_iterator<char>(in), {});
    html.compare = o.compare;
    std::vector<const results::RunReport*> pointers;
    for (const auto& r : reports) pointers.push_back(&r);
    runtime::write_file_atomically(o.html, results::html_report(pointers, html));
    fmt::print("\nwrote {}\n", o.html);
  }
}

}  // namespace

void add_report_command(CLI::App& app, Context& ctx) {
  auto o = std::make_shared<ReportOptions>();
  CLI::App* cmd = app.add_subcommand("report", "Scores of a stored run by domain and level, failures, CSV export");
  cmd->add_option("runs", o->runs, "Run ids (see `ekb runs`), or 'last'; several are reported one after another")->required();
  cmd->add_option("--html", o->html,
                  "Write one self-contained HTML page of the runs: tables, Fast@p curve, speedups per domain, roofline, "
                  "failures, sources and agent trajectories (docs/RESULTS.md)");
  cmd->add_flag("--compare", o->compare, "Two runs: per workload, what changed from the first to the second");
  add_db_option(cmd, o->db);
  cmd->add_option("--csv", o->csv, "Write every result row to this CSV file");
  cmd->add_option("--json", o->json, "Write the results document (ekb.results/1) to this file");
  cmd->add_option("--by", o->by,
                  "Tables to print: domain, level, pattern, device (default: domain,level; and device when the "
                  "run's shards ran on several devices)")
      ->delimiter(',')
      ->check(CLI::IsMember({"domain", "level", "pattern", "device"}));
  cmd->add_option("--failures", o->failures, "Failures listed per error kind (-1: all)")->capture_default_str();
  cmd->callback([&ctx, o] { run_report(ctx, *o); });
}

}  // namespace ekb::cli
