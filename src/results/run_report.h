// One run, scored: its results joined with what the suite knows about each workload (domain,
// level, cost) and the device's roofline, plus summaries overall and per group. What the results
// JSON, `ekb report` and the CSV export are all rendered from.
#pragma once
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "eval/metrics.h"
#include "eval/result.h"
#include "eval/roofline.h"
#include "results/result_store.h"
#include "runtime/calibration.h"
#include "suite/suite.h"

namespace ekb::results {

struct WorkloadFacts {
  std::string pattern;  // "nn.softmax"
  std::string domain;   // "nn"
  std::string level;    // "operator", "fused", "graph"; "unknown" when not in the suite
  std::optional<eval::WorkCost> cost;  // nullopt when not in the suite or the cost is undefined
};

// Facts by full workload name, computed on first request. A workload the suite does not know
// (renamed or removed since the run) still gets its pattern and domain from its name.
class WorkloadFactsIndex {
 public:
  explicit WorkloadFactsIndex(const suite::Suite& suite) : suite_(suite) {}
  const WorkloadFacts& get(const std::string& workload);

 private:
  const suite::Suite& suite_;
  std::map<std::string, WorkloadFacts> cache_;
};

struct ScoredResult {
  eval::CandidateResult result;
  WorkloadFacts facts;
  // The device it was measured on: a sharded run's results may come from several machines, each
  // measured against its own machine's baseline and scored with its own calibration.
  std::string device;
  std::optional<double> roofline_fraction;           // of the candidate's median time
  std::optional<double> baseline_roofline_fraction;  // of the baseline's
  std::optional<double> attainable_ms;
  std::optional<bool> memory_bound;
};

enum class GroupBy { Domain, Level, Pattern, Device };
std::string_view group_by_name(GroupBy g);  // "domain", "level", "pattern", "device"
std::optional<GroupBy> parse_group_by(std::string_view s);

struct GroupSummary {
  std::string key;  // the domain, level or pattern
  eval::Summary summary;
};

// The method of results whose solutions had no .meta.json.
inline constexpr const char* kNoMethod = "(no metadata)";

struct RunReport {
  RunInfo run;
  std::optional<runtime::Calibration> calibration;  // nullopt: no roofline fractions
  std::vector<ScoredResult> rows;                // in the order stored
  // The denominator: the run's selected workloads plus any others that have results.
  std::vector<std::string> workloads;
  std::map<std::string, WorkloadFacts> facts;  // of every name in `workloads`
  eval::Summary summary;

  // Summaries of each group, sorted by key. By device, each over the workloads it has results of.
  std::vector<GroupSummary> by(GroupBy g) const;
  // The devices of `rows`, sorted: more than one for a run whose shards ran on different machines.
  std::vector<std::string> devices() const;
  // One summary per method (the results' provenance; kNoMethod for results without metadata), each
  // over all of the run's workloads, so that methods compare on the same denominator and their
  // ledgers (Summary::ledger) at equal budget.
  std::vector<GroupSummary> by_method() const;
};

// Loads the run (any id resolve_run accepts) and scores it. Uses the newest calibration for the
// run's backend and each result's device name (from the store or the cache file).
RunReport build_run_report(const ResultStore& store, const std::string& run, const suite::Suite& suite);

// The metrics of `rows` over the denominator `workloads`, with the median roofline fraction of
// the correct rows that have one.
eval::Summary summarize_rows(const std::vector<const ScoredResult*>& rows, const std::vector<std::string>& workloads);

}  // namespace ekb::results
