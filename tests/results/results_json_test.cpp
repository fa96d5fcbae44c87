// The results document (docs/RESULTS.md) and the CSV export, on real suite workloads.
#include "results/results_json.h"

#include <gtest/gtest.h>

#include <fstream>
#include <limits>
#include <sstream>

#include "ir/cost.h"
#include "results/results_csv.h"
#include "results_test_util.h"

namespace ekb::results {
namespace {

using testing_util::fresh_db_path;
using testing_util::make_result;
using testing_util::make_spec;

const suite::Suite& embedded() {
  static const suite::Suite s = suite::Suite::load();
  return s;
}

std::vector<std::string> workloads_of_domain(const std::string& domain, size_t count) {
  std::vector<std::string> out;
  for (const auto& w : embedded().workloads())
    if (w.pattern->module.pattern.domain() == domain && out.size() < count) out.push_back(w.full_name());
  return out;
}

// Three results on real workloads (two nn, one img) plus a selected workload without a result.
struct Fixture {
  std::string path = fresh_db_path("json.db");
  ResultStore store = ResultStore::open(path);
  std::vector<std::string> nn = workloads_of_domain("nn", 2);
  std::vector<std::string> img = workloads_of_domain("img", 1);
  std::string run;

  Fixture() {
    runtime::Calibration c;
    c.backend = "cpu";
    c.device = "Test CPU";
    c.created = runtime::utc_timestamp_now();
    c.bandwidth_gbs = runtime::summarize_higher_is_better({10});
    c.peak_gflops = runtime::summarize_higher_is_better({100});
    c.details["method"] = runtime::calibration_method(ir::Target::Cpu);  // measured the current way
    store.add_calibration(c);
    run = store.begin_or_resume_run(make_spec({nn[0], nn[1], img[0], "nn.gone/removed"}));
    eval::CandidateResult ok = make_result(nn[0], 0, true, 2.0);
    ok.max_error_ratio = 0.25;
    ok.speedup_low = 1.9;
    ok.speedup_high = 2.1;
    ok.cpu_steal = 0.01;
    store.add(run, ok);
    eval::CandidateResult bad = make_result(nn[1], 0, false);
    bad.max_error_ratio = std::numeric_limits<double>::infinity();  // a NaN where a number belongs
    bad.message = "first, line\nsecond \"line\"";
    store.add(run, bad);
    store.add(run, make_result(img[0], 0, true, 0.5));
  }
};

TEST(ResultsJson, FollowsTheContract) {
  Fixture f;
  std::string out = fresh_db_path("results.json");
  write_results_json(f.store, f.run, out, &embedded());
  nlohmann::json j = nlohmann::json::parse(std::ifstream(out));

  EXPECT_EQ(j["schema"], "ekb.results/1");
  EXPECT_EQ(j["device"]["backend"], "cpu");
  EXPECT_EQ(j["device"]["name"], "Test CPU");
  EXPECT_EQ(j["device"]["compiler"], "clang 16");
  EXPECT_EQ(j["run"]["id"], f.run);

  ASSERT_EQ(j["results"].size(), 3u);
  for (const auto& r : j["results"])
    for (const char* key : {"task", "workload", "backend", "solution", "compiled", "correct", "error", "time_ms",
                            "baseline_ms", "speedup", "message", "sample", "domain", "level", "roofline",
                            "max_error_ratio", "baseline"})
      EXPECT_TRUE(r.contains(key)) << key;
  const auto& ok = j["results"][0];
  EXPECT_DOUBLE_EQ(ok["max_error_ratio"].get<double>(), 0.25);  // how close the pass came
  EXPECT_EQ(ok["speedup_ci95"], nlohmann::json::array({1.9, 2.1}));
  EXPECT_DOUBLE_EQ(ok["cpu_steal"].get<double>(), 0.01);
  EXPECT_TRUE(j["results"][1]["speedup_ci95"].is_null());  // not timed
  EXPECT_TRUE(j["results"][1]["cpu_steal"].is_null());
  EXPECT_TRUE(j["results"][1]["max_error_ratio"].is_null());    // infinite
  EXPECT_TRUE(j["results"][2]["max_error_ratio"].is_null());    // not recorded
  EXPECT_EQ(ok["workload"], f.nn[0]);
  EXPECT_TRUE(ok["error"].is_null());
  EXPECT_EQ(ok["domain"], "nn");
  for (const char* key : {"median", "p25", "p75"}) {
    EXPECT_TRUE(ok["time_ms"][key].is_number()) << key;
    EXPECT_TRUE(ok["baseline_ms"][key].is_number()) << key;
  }
  EXPECT_DOUBLE_EQ(ok["speedup"].get<double>(), 2.0);
  // Roofline fraction = max(ops / 100 GFLOP/s, bytes / 10 GB/s) / measured median.
  ir::CostFacts cost = ir::compute_cost(suite::bind_workload(*embedded().find_workload(f.nn[0])));
  double attainable_s = std::max(cost.ops() / 100e9, cost.min_bytes / 10e9);
  EXPECT_NEAR(ok["roofline"]["fraction"].get<double>(), attainable_s / (1.0 / 1e3), 1e-9 * attainable_s * 1e3);
  EXPECT_NEAR(ok["roofline"]["attainable_ms"].get<double>(), attainable_s * 1e3, 1e-12);

  const auto& bad = j["results"][1];
  EXPECT_EQ(bad["error"], "mismatch");
  EXPECT_EQ(bad["message"], "first, line\nsecond \"line\"");
  EXPECT_TRUE(bad["time_ms"].is_null());
  EXPECT_TRUE(bad["speedup"].is_null());

  const auto& s = j["summary"];
  EXPECT_EQ(s["n"], 3);
  EXPECT_EQ(s["compiled"], 3);
  EXPECT_EQ(s["correct"], 2);
  EXPECT_EQ(s["workloads"], 4);  // the selected workload without a result counts
  EXPECT_DOUBLE_EQ(s["correct_at_1"].get<double>(), 0.5);
  std::vector<std::string> keys;
  for (const auto& [k, v] : s["fast_at"].items()) keys.push_back(k);
  EXPECT_EQ(keys, (std::vector<std::string>{"0.0", "0.5", "0.8", "1.0", "1.5", "2.0"}));
  EXPECT_DOUBLE_EQ(s["fast_at"]["0.0"].get<double>(), 0.5);
  EXPECT_DOUBLE_EQ(s["fast_at"]["1.0"].get<double>(), 0.25);
  EXPECT_DOUBLE_EQ(s["fast_at"]["2.0"].get<double>(), 0.0);  // exactly 2.0 is not faster than 2.0
  EXPECT_NEAR(s["geomean_speedup"].get<double>(), 1.0, 1e-12);
  EXPECT_TRUE(s["correct_at_k"].contains("1"));
  EXPECT_FALSE(s["correct_at_k"].contains("5"));  // one sample per workload
  EXPECT_TRUE(s["median_roofline_fraction"].is_number());
  ASSERT_TRUE(s["by_domain"].contains("nn") && s["by_domain"].contains("img"));
  EXPECT_EQ(s["by_domain"]["nn"]["workloads"], 3);
  EXPECT_EQ(s["by_domain"]["img"]["correct"], 1);
  EXPECT_TRUE(s["by_level"].is_object());
  EXPECT_TRUE(s["by_level"].contains("unknown"));  // nn.gone/removed is not in the suite
}

TEST(ResultsJson, WithoutCalibrationRooflineIsNull) {
  std::string path = fresh_db_path("nocal.db");
  ResultStore store = ResultStore::open(path);
  auto nn = workloads_of_domain("nn", 1);
  std::string run = store.begin_or_resume_run(make_spec(nn, "Uncalibrated Device 9000"));
  store.add(run, make_result(nn[0], 0, true, 1.2));
  nlohmann::json j = results_json(build_run_report(store, run, embedded()));
  EXPECT_TRUE(j["calibration"].is_null());
  EXPECT_TRUE(j["results"][0]["roofline"].is_null());
  EXPECT_TRUE(j["summary"]["median_roofline_fraction"].is_null());
}

TEST(ResultsCsv, QuotesAndOneRowPerResult) {
  EXPECT_EQ(csv_field("plain"), "plain");
  EXPECT_EQ(csv_field("a,b"), "\"a,b\"");
  EXPECT_EQ(csv_field("say \"hi\""), "\"say \"\"hi\"\"\"");
  EXPECT_EQ(csv_field("two\nlines"), "\"two\nlines\"");

  Fixture f;
  std::ostringstream out;
  write_results_csv(build_run_report(f.store, f.run, embedded()), out);
  std::string csv = out.str();
  EXPECT_EQ(csv.rfind("run,workload,task,domain,level,", 0), 0u);
  EXPECT_NE(csv.find("\"first, line\nsecond \"\"line\"\"\""), std::string::npos);
  // 4 records: header + 3 results; the quoted message holds the only extra line break.
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 5);
}

}  // namespace
}  // namespace ekb::results
