#include "results/results_json.h"

#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <stdexcept>

namespace ekb::results {

namespace {

nlohmann::json optional_number(const std::optional<double>& v) { return v ? nlohmann::json(*v) : nlohmann::json(nullptr); }

nlohmann::json ledger_json(const eval::Ledger& l) {
  return {{"llm_calls", l.llm_calls},     {"input_tokens", l.input_tokens}, {"output_tokens", l.output_tokens},
          {"cost_usd", l.cost_usd},       {"evaluations", l.evaluations},   {"wall_s", l.wall_s}};
}

nlohmann::json time_json(const std::optional<eval::TimeStats>& t) {
  if (!t) return nullptr;
  return {{"median", t->median_ms}, {"p25", t->p25_ms}, {"p75", t->p75_ms}, {"runs", t->runs}};
}

// docs/RESULTS.md's device object: backend, name and compiler always present, whatever else the run
// recorded kept beside them.
nlohmann::json device_json(const RunInfo& run) {
  nlohmann::json d = run.device.is_object() ? run.device : nlohmann::json::object();
  if (!d.contains("backend")) d["backend"] = run.backend;
  if (!d.contains("name")) d["name"] = nullptr;
  if (!d.contains("compiler")) d["compiler"] = nullptr;
  return d;
}

}  // namespace

nlohmann::json result_json(const ScoredResult& s) {
  const eval::CandidateResult& r = s.result;
  nlohmann::json j = {
      {"task", r.task},
      {"workload", r.workload},
      {"backend", r.backend},
      {"solution", r.solution},
      {"sample", r.sample},
      {"compiled", r.compiled},
      {"correct", r.correct},
      {"error", r.error == eval::ErrorKind::None ? nlohmann::json(nullptr)
                                                 : nlohmann::json(std::string(eval::error_kind_name(r.error)))},
      {"message", r.message},
      {"time_ms", time_json(r.time)},
      {"baseline_ms", time_json(r.baseline)},
      {"speedup", optional_number(r.speedup)},
      {"baseline", eval::to_json(r.baseline_info)},
      {"speedup_ci95", r.speedup ? nlohmann::json::array({r.speedup_low, r.speedup_high}) : nlohmann::json(nullptr)},
      {"cpu_steal", r.cpu_steal >= 0 ? nlohmann::json(r.cpu_steal) : nlohmann::json(nullptr)},
      {"domain", s.facts.domain},
      {"level", s.facts.level},
      {"max_abs_error", r.max_abs_error},  // NaN dumps as null
      // How close a pass came: <= 1 when correct; null when nothing was compared or it is infinite.
      {"max_error_ratio", r.max_error_ratio && std::isfinite(*r.max_error_ratio) ? nlohmann::json(*r.max_error_ratio)
                                                                                 : nlohmann::json(nullptr)},
      {"cost",
       {{"compile_s", r.cost.compile_s},
        {"check_s", r.cost.check_s},
        {"time_s", r.cost.time_s},
        {"time_cpu_s", r.cost.time_cpu_s},
        {"compile_cached", r.cost.compile_cached}}},
  };
  if (r.provenance) {
    j["method"] = r.provenance->method;
    j["model"] = r.provenance->model.empty() ? nlohmann::json(nullptr) : nlohmann::json(r.provenance->model);
    j["ledger"] = ledger_json(r.provenance->ledger);
  } else {
    j["method"] = nullptr;
    j["model"] = nullptr;
    j["ledger"] = nullptr;  // no .meta.json: the cost of producing it is unknown
  }
  if (s.attainable_ms)
    j["roofline"] = {{"fraction", optional_number(s.roofline_fraction)},
                     {"baseline_fraction", optional_number(s.baseline_roofline_fraction)},
                     {"attainable_ms", *s.attainable_ms},
                     {"bound", s.memory_bound.value_or(false) ? "memory" : "compute"}};
  else
    j["roofline"] = nullptr;
  return j;
}

nlohmann::json summary_json(const eval::Summary& s) {
  nlohmann::json fast = nlohmann::json::object(), best = nlohmann::json::object(), at_k = nlohmann::json::object();
  for (const auto& [p, v] : s.fast_at) fast[eval::threshold_key(p)] = v;
  for (const auto& [p, v] : s.fast_at_best_of_n) best[eval::threshold_key(p)] = v;
  for (const auto& [k, v] : s.correct_at_k) at_k[std::to_string(k)] = v;
  nlohmann::json by_sample = nlohmann::json::object();
  for (const auto& [sample, scores] : s.by_sample) {
    nlohmann::json fast_sample = nlohmann::json::object();
    for (const auto& [p, v] : scores.fast_at) fast_sample[eval::threshold_key(p)] = v;
    by_sample[std::to_string(sample)] = {{"correct", scores.correct}, {"fast_at", fast_sample}};
  }
  nlohmann::json ledger = ledger_json(s.ledger);
  ledger["results"] = s.ledgered;
  return {{"by_sample", by_sample},
          {"ledger", ledger},{"n", s.n},
          {"compiled", s.compiled},
          {"correct", s.correct},
          {"correct_at_1", s.correct_at_k.at(1)},
          {"fast_at", fast},
          {"geomean_speedup", optional_number(s.geomean_speedup)},
          {"workloads", s.workloads},
          {"samples_per_workload", {{"min", s.min_samples}, {"max", s.max_samples}}},
          {"correct_at_k", at_k},
          {"fast_at_best_of_n", best},
          {"median_roofline_fraction", optional_number(s.median_roofline_fraction)}};
}

nlohmann::json results_json(const RunReport& report) {
  nlohmann::json results = nlohmann::json::array();
  for (const auto& r : report.rows) results.push_back(result_json(r));
  nlohmann::json summary = summary_json(report.summary);
  for (GroupBy g : {GroupBy::Domain, GroupBy::Level}) {
    nlohmann::json groups = nlohmann::json::object();
    for (const auto& gs : report.by(g)) groups[gs.key] = summary_json(gs.summary);
    summary["by_" + std::string(group_by_name(g))] = groups;
  }
  nlohmann::json methods = nlohmann::json::object();
  for (const auto& gs : report.by_method()) methods[gs.key] = summary_json(gs.summary);
  summary["by_method"] = methods;
  const RunInfo& run = report.run;
  return {{"schema", kResultsSchema},
          {"device", device_json(run)},
          {"run",
           {{"id", run.id},
            {"created", run.created},
            {"finished", run.finished ? nlohmann::json(*run.finished) : nlohmann::json(nullptr)},
            {"options", run.options},
            {"solutions_dir", run.solutions_dir},
            {"selection", run.selection}}},
          {"calibration", report.calibration ? runtime::to_json(*report.calibration) : nlohmann::json(nullptr)},
          {"results", results},
          {"summary", summary}};
}

void write_results_json(const ResultStore& store, const std::string& run, const std::string& path,
                        const suite::Suite* suite) {
  std::optional<suite::Suite> loaded;
  if (!suite) suite = &loaded.emplace(suite::Suite::load(suite::Suite::default_dir()));
  std::string text = results_json(build_run_report(store, run, *suite)).dump(2) + "\n";
  if (path == "-") {
    std::cout << text << std::flush;
    return;
  }
  // Written beside the target and renamed over it: a reader never sees half a document.
  std::filesystem::path tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary);
    out << text;
    if (!out) throw std::runtime_error("cannot write " + tmp.string());
  }
  std::filesystem::rename(tmp, path);
}

}  // namespace ekb::results
