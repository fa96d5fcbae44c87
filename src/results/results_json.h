// The results document of docs/RESULTS.md ("ekb.results/1"): device, one record per result, and the
// summary, with per-domain and per-level summaries and roofline fractions as extra fields.
#pragma once
#include <nlohmann/json.hpp>
#include <string>

#include "eval/metrics.h"
#include "results/result_store.h"
#include "results/run_report.h"
#include "suite/suite.h"

namespace ekb::results {

inline constexpr const char* kResultsSchema = "ekb.results/1";

nlohmann::json result_json(const ScoredResult& r);
nlohmann::json summary_json(const eval::Summary& s);
nlohmann::json results_json(const RunReport& report);

// Scores run `run` of `store` and writes its document to `path` ("-" for stdout), replacing the
// file atomically. `suite` gives domains, levels and costs; nullptr loads the default suite
// (Suite::default_dir()). Throws StoreError for an unknown run, std::runtime_error on I/O errors.
void write_results_json(const ResultStore& store, const std::string& run, const std::string& path,
                        const suite::Suite* suite = nullptr);

}  // namespace ekb::results
