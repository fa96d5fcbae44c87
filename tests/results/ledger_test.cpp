// The budget ledger: stored with each result, migrated into older databases, summed per method in
// the results JSON and CSV; failed generations counted as failed samples.
#include <SQLiteCpp/SQLiteCpp.h>
#include <gtest/gtest.h>

#include <sstream>

#include "eval/metrics.h"
#include "results/result_store.h"
#include "results/results_csv.h"
#include "results/results_json.h"
#include "results/run_report.h"
#include "results_test_util.h"

namespace ekb::results {
namespace {

using testing_util::fresh_db_path;
using testing_util::make_result;
using testing_util::make_spec;

eval::CandidateResult with_ledger(eval::CandidateResult r, const std::string& method, int64_t calls, double cost) {
  eval::Provenance p;
  p.method = method;
  p.model = "m-1";
  p.ledger = {calls, 1000 * calls, 100 * calls, cost, 2, 30.5};
  r.provenance = p;
  return r;
}

eval::CandidateResult no_code(const std::string& workload, int sample, const std::string& method) {
  eval::CandidateResult r = make_result(workload, sample, false);
  r.compiled = false;
  r.error = eval::ErrorKind::NoCode;
  r.message = "no_code: the reply held prose only";
  return with_ledger(r, method, 1, 0.01);
}

TEST(Ledger, RoundTripsThroughTheStore) {
  ResultStore store = ResultStore::open(fresh_db_path("ledger.db"));
  std::string run = store.begin_or_resume_run(make_spec({"nn.x/1"}));
  ASSERT_TRUE(store.add(run, with_ledger(make_result("nn.x/1", 0, true, 1.5), "agent:claude-code", 7, 0.42)));
  ASSERT_TRUE(store.add(run, make_result("nn.x/1", 1, true, 1.5)));  // no metadata
  ASSERT_TRUE(store.add(run, no_code("nn.x/1", 2, "direct")));
  auto back = store.results(run);
  ASSERT_EQ(back.size(), 3u);
  ASSERT_TRUE(back[0].provenance);
  const eval::Provenance& p = *back[0].provenance;
  EXPECT_EQ(p.method, "agent:claude-code");
  EXPECT_EQ(p.model, "m-1");
  EXPECT_EQ(p.ledger.llm_calls, 7);
  EXPECT_EQ(p.ledger.input_tokens, 7000);
  EXPECT_EQ(p.ledger.output_tokens, 700);
  EXPECT_DOUBLE_EQ(p.ledger.cost_usd, 0.42);
  EXPECT_EQ(p.ledger.evaluations, 2);
  EXPECT_DOUBLE_EQ(p.ledger.wall_s, 30.5);
  EXPECT_FALSE(back[1].provenance);  // an empty ledger stays empty, not zeros
  EXPECT_EQ(back[2].error, eval::ErrorKind::NoCode);
}

// A database written before the ledger existed (schema 1), with a result in it.
void write_schema1_database(const std::string& path) {
  SQLite::Database db(path, SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE);
  db.exec(R"sql(
CREATE TABLE runs (id TEXT PRIMARY KEY, created TEXT NOT NULL, backend TEXT NOT NULL, device TEXT NOT NULL,
  options TEXT NOT NULL, solutions_dir TEXT NOT NULL, selection TEXT NOT NULL, params TEXT NOT NULL, finished TEXT);
CREATE INDEX runs_by_params ON runs(params);
CREATE TABLE results (seq INTEGER PRIMARY KEY AUTOINCREMENT,
  run_id TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE, workload TEXT NOT NULL, solution TEXT NOT NULL,
  sample INTEGER NOT NULL, task TEXT NOT NULL, backend TEXT NOT NULL, compiled INTEGER NOT NULL,
  correct INTEGER NOT NULL, error TEXT, message TEXT NOT NULL, time_median_ms REAL, time_p25_ms REAL,
  time_p75_ms REAL, time_runs INTEGER, baseline_median_ms REAL, baseline_p25_ms REAL, baseline_p75_ms REAL,
  baseline_runs INTEGER, speedup REAL, max_abs_error REAL, compile_s REAL NOT NULL, check_s REAL NOT NULL,
  time_s REAL NOT NULL, compile_cached INTEGER NOT NULL, stored TEXT NOT NULL,
  UNIQUE (run_id, workload, solution, sample));
CREATE TABLE calibrations (id INTEGER PRIMARY KEY AUTOINCREMENT, backend TEXT NOT NULL, device TEXT NOT NULL,
  created TEXT NOT NULL, bandwidth_gbs REAL NOT NULL, peak_gflops REAL NOT NULL, data TEXT NOT NULL);
INSERT INTO runs VALUES ('old-run', '2026-01-01T00:00:00Z', 'cpu', '{"name":"Old CPU"}', '{}', 'sol',
  '{"workloads":["nn.x/1"]}', '{}', '2026-01-01T00:01:00Z');
INSERT INTO results (run_id, workload, solution, sample, task, backend, compiled, correct, error, message,
  time_median_ms, time_p25_ms, time_p75_ms, time_runs, baseline_median_ms, baseline_p25_ms, baseline_p75_ms,
  baseline_runs, speedup, max_abs_error, compile_s, check_s, time_s, compile_cached, stored)
  VALUES ('old-run', 'nn.x/1', 'nn.x/1.c', 0, 'nn.x', 'cpu', 1, 1, NULL, '', 1.0, 0.9, 1.1, 20, 2.0, 1.9, 2.1,
  20, 2.0, 0.0, 0.2, 0.1, 0.5, 0, '2026-01-01T00:00:30Z');
PRAGMA user_version = 1;
)sql");
}

TEST(Ledger, AnOlderDatabaseIsMigrated) {
  std::string path = fresh_db_path("old.db");
  write_schema1_database(path);
  {
    ResultStore store = ResultStore::open(path);
    auto old = store.results("old-run");
    ASSERT_EQ(old.size(), 1u);
    EXPECT_TRUE(old[0].correct);
    EXPECT_DOUBLE_EQ(*old[0].speedup, 2.0);
    EXPECT_FALSE(old[0].provenance);  // stored before there was a ledger
    EXPECT_FALSE(old[0].max_error_ratio);  // nor an error ratio
    EXPECT_TRUE(old[0].baseline_info.is_native_default());  // measured against the only baseline there was
    std::string run = store.begin_or_resume_run(make_spec({"nn.x/1"}));
    ASSERT_TRUE(store.add(run, with_ledger(make_result("nn.x/1", 0, true, 1.2), "direct", 1, 0.001)));
  }
  ResultStore again = ResultStore::open(path);  // opening a migrated file changes nothing
  EXPECT_EQ(again.runs().size(), 2u);
  EXPECT_EQ(SQLite::Database(path).execAndGet("PRAGMA user_version").getInt(), 6);
  auto fresh = again.results(again.resolve_run("last"));
  ASSERT_EQ(fresh.size(), 1u);
  ASSERT_TRUE(fresh[0].provenance);
  EXPECT_EQ(fresh[0].provenance->method, "direct");
}

TEST(Ledger, FailedGenerationsCountInEveryDenominator) {
  // Two workloads, two samples each: x has one correct sample and one without code; y has a
  // correct sample 0 and a failed generation.
  std::vector<eval::CandidateResult> results = {
      make_result("nn.x/1", 0, true, 2.0), no_code("nn.x/1", 1, "direct"),
      make_result("nn.y/1", 0, true, 0.5), no_code("nn.y/1", 1, "direct")};
  results[3].error = eval::ErrorKind::GenerationFailed;
  eval::Summary s = eval::summarize(eval::group_by_workload(results, {"nn.x/1", "nn.y/1"}));
  EXPECT_EQ(s.n, 4);
  EXPECT_DOUBLE_EQ(s.correct_at_k.at(1), 0.5);
  EXPECT_DOUBLE_EQ(s.fast_at.at(1.0), 0.25);  // only x's sample 0 is faster: 1/2 of one workload's samples
  EXPECT_DOUBLE_EQ(s.fast_at_best_of_n.at(1.0), 0.5);
  ASSERT_EQ(s.by_sample.size(), 2u);
  EXPECT_DOUBLE_EQ(s.by_sample.at(0).correct, 1.0);
  EXPECT_DOUBLE_EQ(s.by_sample.at(0).fast_at.at(1.0), 0.5);
  EXPECT_DOUBLE_EQ(s.by_sample.at(1).correct, 0.0);
  EXPECT_EQ(s.ledgered, 2);
  EXPECT_EQ(s.ledger.llm_calls, 2);
  EXPECT_DOUBLE_EQ(s.ledger.cost_usd, 0.02);
}

TEST(Ledger, ResultsJsonAndCsvCarryItPerResultAndPerMethod) {
  ResultStore store = ResultStore::open(fresh_db_path("json.db"));
  std::string run = store.begin_or_resume_run(make_spec({"nn.x/1", "nn.y/1"}));
  store.add(run, with_ledger(make_result("nn.x/1", 0, true, 3.0), "agent:codex", 4, 0.2));
  store.add(run, no_code("nn.y/1", 0, "agent:codex"));
  store.add(run, make_result("nn.x/1", 0, true, 1.1, "plain/x.c"));  // no metadata
  suite::Suite suite = suite::Suite::load();
  RunReport report = build_run_report(store, run, suite);
  nlohmann::json doc = results_json(report);
  const auto& rows = doc["results"];
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0]["method"], "agent:codex");
  EXPECT_EQ(rows[0]["ledger"]["llm_calls"], 4);
  EXPECT_EQ(rows[1]["error"], "no_code");
  EXPECT_TRUE(rows[2]["ledger"].is_null());
  EXPECT_TRUE(rows[2]["method"].is_null());
  const auto& summary = doc["summary"];
  EXPECT_EQ(summary["ledger"]["llm_calls"], 5);
  EXPECT_EQ(summary["ledger"]["results"], 2);
  const auto& codex = summary["by_method"]["agent:codex"];
  EXPECT_EQ(codex["n"], 2);
  EXPECT_EQ(codex["workloads"], 2);  // every method over all of the run's workloads
  EXPECT_DOUBLE_EQ(codex["correct_at_1"].get<double>(), 0.5);
  EXPECT_DOUBLE_EQ(codex["ledger"]["cost_usd"].get<double>(), 0.21);
  EXPECT_EQ(summary["by_method"][kNoMethod]["ledger"]["results"], 0);
  EXPECT_TRUE(summary["by_sample"].contains("0"));

  std::ostringstream csv;
  write_results_csv(report, csv);
  std::string text = csv.str();
  EXPECT_NE(text.find(",method,model,llm_calls,input_tokens,output_tokens,cost_usd,evaluations,wall_s\n"),
            std::string::npos);
  EXPECT_NE(text.find(",agent:codex,m-1,4,4000,400,0.2,2,30.5\n"), std::string::npos) << text;
  EXPECT_NE(text.find(",0,,,,,,,,\n"), std::string::npos) << text;  // compile_cached, then an empty ledger
}

}  // namespace
}  // namespace ekb::results
