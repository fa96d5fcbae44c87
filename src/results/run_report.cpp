#include "results/run_report.h"

#include <set>

#include "ir/cost.h"
#include "results/calibration_cache.h"

namespace ekb::results {

const WorkloadFacts& WorkloadFactsIndex::get(const std::string& workload) {
  if (auto it = cache_.find(workload); it != cache_.end()) return it->second;
  WorkloadFacts f;
  f.pattern = workload.substr(0, workload.find('/'));
  f.domain = f.pattern.substr(0, f.pattern.find('.'));
  f.level = "unknown";
  if (auto w = suite_.find_workload(workload)) {
    f.level = std::string(ir::level_name(w->pattern->module.pattern.level));
    try {
      ir::CostFacts c = ir::compute_cost(suite::bind_workload(*w));
      f.cost = eval::WorkCost{c.ops(), c.min_bytes, c.input_bytes};
    } catch (const std::exception&) {
      // An invalid workload has no cost; its results simply get no roofline fraction.
    }
  }
  return cache_.emplace(workload, std::move(f)).first->second;
}

std::string_view group_by_name(GroupBy g) {
  switch (g) {
    case GroupBy::Domain: return "domain";
    case GroupBy::Level: return "level";
    case GroupBy::Pattern: return "pattern";
    case GroupBy::Device: return "device";
  }
  return "domain";
}

std::optional<GroupBy> parse_group_by(std::string_view s) {
  for (GroupBy g : {GroupBy::Domain, GroupBy::Level, GroupBy::Pattern, GroupBy::Device})
    if (group_by_name(g) == s) return g;
  return std::nullopt;
}

eval::Summary summarize_rows(const std::vector<const ScoredResult*>& rows, const std::vector<std::string>& workloads) {
  std::vector<eval::CandidateResult> results;
  std::vector<double> fractions;
  results.reserve(rows.size());
  for (const auto* r : rows) {
    results.push_back(r->result);
    if (r->result.correct && r->roofline_fraction) fractions.push_back(*r->roofline_fraction);
  }
  eval::Summary s = eval::summarize(eval::group_by_workload(results, workloads));
  s.median_roofline_fraction = eval::median(fractions);
  return s;
}

namespace {

const std::string& group_key(const WorkloadFacts& f, GroupBy g) {
  switch (g) {
    case GroupBy::Domain: return f.domain;
    case GroupBy::Level: return f.level;
    case GroupBy::Pattern: return f.pattern;
    case GroupBy::Device: break;  // not a workload's fact: RunReport::by groups rows
  }
  return f.domain;
}

}  // namespace

std::vector<GroupSummary> RunReport::by(GroupBy g) const {
  std::map<std::string, std::vector<std::string>> workloads_of;
  std::map<std::string, std::vector<const ScoredResult*>> rows_of;
  if (g == GroupBy::Device) {
    std::map<std::string, std::set<std::string>> seen;
    for (const auto& r : rows) {
      rows_of[r.device].push_back(&r);
      if (seen[r.device].insert(r.result.workload).second) workloads_of[r.device].push_back(r.result.workload);
    }
  } else {
    for (const auto& w : workloads) workloads_of[group_key(facts.at(w), g)].push_back(w);
    for (const auto& r : rows) rows_of[group_key(r.facts, g)].push_back(&r);
  }
  std::vector<GroupSummary> out;
  for (const auto& [key, names] : workloads_of) out.push_back({key, summarize_rows(rows_of[key], names)});
  return out;
}

std::vector<GroupSummary> RunReport::by_method() const {
  std::map<std::string, std::vector<const ScoredResult*>> rows_of;
  for (const auto& r : rows) rows_of[r.result.provenance ? r.result.provenance->method : kNoMethod].push_back(&r);
  std::vector<GroupSummary> out;
  for (const auto& [method, method_rows] : rows_of) out.push_back({method, summarize_rows(method_rows, workloads)});
  return out;
}

std::vector<std::string> RunReport::devices() const {
  std::set<std::string> names;
  for (const auto& r : rows) names.insert(r.device);
  return {names.begin(), names.end()};
}

RunReport build_run_report(const ResultStore& store, const std::string& run, const suite::Suite& suite) {
  RunReport report;
  report.run = *store.run(store.resolve_run(run));
  report.calibration = find_calibration(&store, report.run.backend, report.run.device_name());
  // Each device's roofline from its own calibration: machines are never scored as one.
  std::map<std::string, std::optional<eval::Roofline>> roofs;
  roofs[report.run.device_name()] =
      report.calibration ? std::optional(eval::Roofline::from(*report.calibration)) : std::nullopt;
  auto roofline_of = [&](const std::string& device) -> const std::optional<eval::Roofline>& {
    auto it = roofs.find(device);
    if (it != roofs.end()) return it->second;
    auto c = find_calibration(&store, report.run.backend, device);
    return roofs[device] = c ? std::optional(eval::Roofline::from(*c)) : std::nullopt;
  };
  const std::map<ResultKey, std::string> devices = store.devices(report.run.id);

  WorkloadFactsIndex index(suite);
  std::set<std::string> seen;
  for (const auto& w : report.run.selected_workloads())
    if (seen.insert(w).second) report.workloads.push_back(w);
  for (auto& r : store.results(report.run.id)) {
    if (seen.insert(r.workload).second) report.workloads.push_back(r.workload);
    ScoredResult s;
    s.facts = index.get(r.workload);
    auto device = devices.find({r.workload, r.solution, r.sample});
    s.device = device != devices.end() ? device->second : report.run.device_name();
    const std::optional<eval::Roofline>& roof = roofline_of(s.device);
    if (roof && s.facts.cost) {
      s.attainable_ms = eval::attainable_seconds(*s.facts.cost, *roof) * 1e3;
      s.memory_bound = eval::memory_bound(*s.facts.cost, *roof);
      if (r.time) s.roofline_fraction = eval::roofline_fraction(*s.facts.cost, *roof, r.time->median_ms);
      if (r.baseline) s.baseline_roofline_fraction = eval::roofline_fraction(*s.facts.cost, *roof, r.baseline->median_ms);
    }
    s.result = std::move(r);
    report.rows.push_back(std::move(s));
  }
  for (const auto& w : report.workloads) report.facts.emplace(w, index.get(w));

  std::vector<const ScoredResult*> all;
  for (const auto& r : report.rows) all.push_back(&r);
  report.summary = summarize_rows(all, report.workloads);
  return report;
}

}  // namespace ekb::results
