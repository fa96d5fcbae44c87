#include "results/html_report.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "eval/metrics.h"
#include "results/results_json.h"

namespace ekb::results {

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// A source larger than this is cut (a generated file can be huge); the page says so.
constexpr size_t kMaxSourceBytes = 64 * 1024;

json number_or_null(const std::optional<double>& v) {
  return v && std::isfinite(*v) ? json(*v) : json(nullptr);
}

std::string read_text(const fs::path& path, size_t limit) {
  std::ifstream in(path, std::ios::binary);
  std::string text{std::istreambuf_iterator<char>(in), {}};
  if (text.size() > limit) text = text.substr(0, limit) + "\n... (cut at " + std::to_string(limit) + " bytes)\n";
  return text;
}

// The steps of a LEKA trajectory (docs/AGENT.md, "Trajectories"), the fields the page shows.
json trajectory_json(const fs::path& path) {
  json steps = json::array(), final_record = nullptr;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) {
    json r = json::parse(line, nullptr, false);
    if (r.is_discarded() || !r.is_object()) continue;
    const std::string kind = r.value("record", "");
    if (kind == "step") {
      json s = json::object();
      for (const char* key : {"step", "layer", "action", "outcome", "ms", "speedup", "roofline_fraction", "message", "diff"})
        if (r.contains(key)) s[key] = r[key];
      if (s.contains("message") && s["message"].is_string()) s["message"] = s["message"].get<std::string>().substr(0, 400);
      steps.push_back(s);
    } else if (kind == "final") {
      final_record = r;
    }
  }
  return {{"steps", steps}, {"final", final_record}};
}

// Fast_p@1 over a log-spaced range of p wide enough for every speedup of the run.
json fast_curve(const RunReport& report) {
  std::vector<eval::CandidateResult> results;
  double top = 4;
  for (const auto& r : report.rows) {
    results.push_back(r.result);
    if (r.result.correct && r.result.speedup) top = std::max(top, *r.result.speedup * 1.2);
  }
  const auto groups = eval::group_by_workload(results, report.workloads);
  json curve = json::array();
  const double lo = 0.05;
  const int points = 160;
  for (int k = 0; k <= points; ++k) {
    const double p = lo * std::pow(top / lo, static_cast<double>(k) / points);
    curve.push_back({p, eval::fast_at_k(groups, p, 1).value_or(0)});
  }
  return curve;
}

json calibration_json(const RunReport& report) {
  if (!report.calibration) return nullptr;
  const runtime::Calibration& c = *report.calibration;
  return {{"bandwidth_gbs", c.bandwidth_gbs.best},
          {"read_bandwidth_gbs", c.read_bandwidth_gbs.runs > 0 ? json(c.read_bandwidth_gbs.best) : json(nullptr)},
          {"peak_gflops", c.peak_gflops.best},
          {"created", c.created}};
}

json run_json(const RunReport& report, int index) {
  const RunInfo& run = report.run;
  json j = {{"id", run.id},
            {"backend", run.backend},
            {"device", run.device},
            {"created", run.created},
            {"finished", run.finished ? json(*run.finished) : json(nullptr)},
            {"solutions_dir", run.solutions_dir},
            {"timed", run.timed()},
            {"calibration", calibration_json(report)},
            {"summary", summary_json(report.summary)}};
  json groups = json::object();
  for (GroupBy g : {GroupBy::Domain, GroupBy::Level}) {
    json by = json::object();
    for (const auto& gs : report.by(g)) by[gs.key] = summary_json(gs.summary);
    groups[std::string(group_by_name(g))] = by;
  }
  // Methods compared in one run (`ekb experiment`): each over all of the run's workloads.
  json methods = json::object();
  for (const auto& gs : report.by_method()) methods[gs.key] = summary_json(gs.summary);
  groups["method"] = methods;
  j["groups"] = groups;
  j["curve"] = run.timed() ? fast_curve(report) : json::array();

  std::set<std::string> baselines;
  double max_steal = -1;
  json results = json::array(), sources = json::object(), trajectories = json::object();
  std::map<std::string, std::string> source_ids;      // solution file -> id
  std::map<std::string, std::string> trajectory_ids;  // workload -> id (one per workload, whatever its samples)
  for (const ScoredResult& s : report.rows) {
    const eval::CandidateResult& r = s.result;
    baselines.insert(r.baseline_info.describe());
    max_steal = std::max(max_steal, r.cpu_steal);
    json row = {{"workload", r.workload},
                {"domain", s.facts.domain},
                {"level", s.facts.level},
                {"solution", r.solution},
                {"sample", r.sample},
                {"correct", r.correct},
                {"error", r.error == eval::ErrorKind::None ? json(nullptr) : json(std::string(eval::error_kind_name(r.error)))},
                {"message", r.message.substr(0, 600)},
                {"speedup", number_or_null(r.speedup)},
                {"ci", r.speedup ? json::array({r.speedup_low, r.speedup_high}) : json(nullptr)},
                {"ms", r.time ? json(r.time->median_ms) : json(nullptr)},
                {"baseline_ms", r.baseline ? json(r.baseline->median_ms) : json(nullptr)},
                {"ops", s.facts.cost ? json(s.facts.cost->ops) : json(nullptr)},
                {"bytes", s.facts.cost ? json(s.facts.cost->bytes) : json(nullptr)},
                {"fraction", number_or_null(s.roofline_fraction)},
                {"baseline_fraction", number_or_null(s.baseline_roofline_fraction)},
                {"method", r.provenance ? json(r.provenance->method) : json(nullptr)}};
    // The solution's file and the agent's trajectory beside it, when the run's directory has them.
    if (!run.solutions_dir.empty() && r.solution.find(':') == std::string::npos) {
      const fs::path file = fs::path(run.solutions_dir) / r.solution;
      std::error_code ec;
      if (fs::is_regular_file(file, ec)) {
        auto [it, added] = source_ids.emplace(r.solution, "r" + std::to_string(index) + "-src" + std::to_string(source_ids.size()));
        if (added) sources[it->second] = {{"path", r.solution}, {"text", read_text(file, kMaxSourceBytes)}};
        row["source"] = it->second;
      }
      if (auto known = trajectory_ids.find(r.workload); known != trajectory_ids.end()) {
        row["trajectory"] = known->second;
      } else if (const fs::path trajectory = fs::path(run.solutions_dir) / (r.workload + ".trajectory.jsonl");
                 fs::is_regular_file(trajectory, ec)) {
        const std::string id = "r" + std::to_string(index) + "-traj" + std::to_string(trajectory_ids.size());
        json t = trajectory_json(trajectory);
        t["workload"] = r.workload;
        trajectories[id] = t;
        trajectory_ids[r.workload] = id;
        row["trajectory"] = id;
      }
    }
    results.push_back(row);
  }
  j["results"] = results;
  j["sources"] = sources;
  j["trajectories"] = trajectories;
  j["baselines"] = std::vector<std::string>(baselines.begin(), baselines.end());
  j["max_cpu_steal"] = max_steal >= 0 ? json(max_steal) : json(nullptr);
  return j;
}

// The best correct sample's speedup of each workload, and whether any sample is correct.
struct Best {
  bool correct = false;
  std::optional<double> speedup;
};
std::map<std::string, Best> best_by_workload(const RunReport& report) {
  std::map<std::string, Best> out;
  for (const auto& s : report.rows) {
    Best& b = out[s.result.workload];
    if (!s.result.correct) continue;
    b.correct = true;
    if (s.result.speedup && (!b.speedup || *s.result.speedup > *b.speedup)) b.speedup = s.result.speedup;
  }
  return out;
}

// JSON safe inside <script type="application/json">: no "</" or "<!--" can end or hide the
// element's text ("\u003c" is "<" in a JSON string, the only place JSON has one).
std::string json_in_script(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (size_t k = 0; k < text.size(); ++k) {
    if (text[k] == '<' && k + 1 < text.size() && (text[k + 1] == '/' || text[k + 1] == '!')) out += "\\u003c";
    else out += text[k];
  }
  return out;
}

// JavaScript safe inside <script>: "</script" can only occur in its strings and regular
// expressions, where "<\/script" means the same.
std::string script_in_script(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (size_t k = 0; k < text.size(); ++k) {
    if (text[k] == '<' && k + 1 < text.size() && text[k + 1] == '/' && text.compare(k + 2, 6, "script") == 0) out += "<\\";
    else out += text[k];
  }
  return out;
}

}  // namespace

std::vector<WorkloadComparison> compare_runs(const RunReport& a, const RunReport& b) {
  const auto best_a = best_by_workload(a), best_b = best_by_workload(b);
  std::set<std::string> names;
  for (const auto& [w, _] : best_a) names.insert(w);
  for (const auto& [w, _] : best_b) names.insert(w);
  std::vector<WorkloadComparison> out;
  for (const std::string& w : names) {
    WorkloadComparison c;
    c.workload = w;
    const auto ia = best_a.find(w), ib = best_b.find(w);
    if (ia == best_a.end()) c.change = "only in B";
    else if (ib == best_b.end()) c.change = "only in A";
    else if (!ia->second.correct && ib->second.correct) c.change = "newly correct";
    else if (ia->second.correct && !ib->second.correct) c.change = "newly failing";
    else c.change = ia->second.correct ? "both correct" : "both failing";
    if (ia != best_a.end()) c.speedup_a = ia->second.speedup;
    if (ib != best_b.end()) c.speedup_b = ib->second.speedup;
    out.push_back(c);
  }
  return out;
}

json html_report_data(const std::vector<const RunReport*>& runs, bool compare) {
  json j = {{"schema", "ekb.html-report/1"}, {"runs", json::array()}};
  for (size_t k = 0; k < runs.size(); ++k) j["runs"].push_back(run_json(*runs[k], static_cast<int>(k)));
  j["thresholds"] = std::vector<double>(eval::kFastThresholds.begin(), eval::kFastThresholds.end());
  if (compare && runs.size() == 2) {
    json rows = json::array();
    for (const auto& c : compare_runs(*runs[0], *runs[1]))
      rows.push_back({{"workload", c.workload},
                      {"change", c.change},
                      {"speedup_a", number_or_null(c.speedup_a)},
                      {"speedup_b", number_or_null(c.speedup_b)},
                      {"ratio", number_or_null(c.ratio())}});
    j["comparison"] = rows;
  } else {
    j["comparison"] = nullptr;
  }
  return j;
}

std::string default_chart_library_path() {
  const char* env = std::getenv("EKB_D3_JS");
  return env && *env ? env : "/usr/share/javascript/d3/d3.min.js";
}

// The page around the data: style, structure and the drawing script (html_report_page.cpp).
extern const char* const kHtmlReportPage;

std::string html_report(const std::vector<const RunReport*>& runs, const HtmlReportOptions& options) {
  std::string title = "ekb report";
  for (const RunReport* r : runs) title += " " + r->run.id;
  const std::map<std::string, std::string> fill = {
      {"@TITLE@", title},
      {"@CHART_LIBRARY@", script_in_script(options.chart_library)},
      {"@DATA@", json_in_script(html_report_data(runs, options.compare).dump())}};
  // The template's markers replaced in one pass, so that a marker's text inside the data or the
  // library stays as it is.
  const std::string page = kHtmlReportPage;
  std::string out;
  size_t at = 0;
  while (true) {
    size_t next = std::string::npos;
    const std::string* marker = nullptr;
    for (const auto& [m, _] : fill)
      if (size_t f = page.find(m, at); f < next) next = f, marker = &m;
    if (!marker) break;
    out += page.substr(at, next - at) + fill.at(*marker);
    at = next + marker->size();
  }
  return out + page.substr(at);
}

}  // namespace ekb::results
