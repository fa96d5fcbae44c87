// `ekb report RUN... --html OUT` (docs/RESULTS.md, "The HTML report"): one or several runs as a
// single static page that opens offline: the summary tables, the Fast@p curve, the speedup
// distribution per domain, the roofline with each kernel on it, failures by kind, and every
// workload's row linked to its solution's source and, for agent runs, its trajectory, all inside
// the file. The data behind the plots is in the page as JSON (html_report_data), and the plots are
// drawn from it by D3 (Debian's libjs-d3), inlined.
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "results/run_report.h"

namespace ekb::results {

// One workload of two runs side by side (`ekb report --compare A B`).
struct WorkloadComparison {
  std::string workload;
  std::string change;  // "newly correct", "newly failing", "both correct", "both failing", "only in A", "only in B"
  std::optional<double> speedup_a, speedup_b;  // of the workload's best correct sample
  std::optional<double> ratio() const {
    if (!speedup_a || !speedup_b || *speedup_a <= 0) return std::nullopt;
    return *speedup_b / *speedup_a;
  }
};
std::vector<WorkloadComparison> compare_runs(const RunReport& a, const RunReport& b);

// The page's data: per run its identity, machine, summaries (overall, by domain and level), the
// Fast@p curve, every result with its workload's cost, and the sources and trajectories its rows
// link to (read from the run's solutions directory where they exist); with two runs and
// `compare`, their comparison.
nlohmann::json html_report_data(const std::vector<const RunReport*>& runs, bool compare);

struct HtmlReportOptions {
  std::string chart_library;  // D3's source text, inlined into the page
  bool compare = false;
};
std::string html_report(const std::vector<const RunReport*>& runs, const HtmlReportOptions& options);

// Where Debian's libjs-d3 puts D3 (scripts/install-deps.sh installs it); $EKB_D3_JS overrides it.
std::string default_chart_library_path();

}  // namespace ekb::results
