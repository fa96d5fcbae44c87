// The results database: round trips, run identity and resumption, no duplicates, calibrations; the
// same behaviour from both engines, a SQLite file and a PostgreSQL server (started by the test).
#include "results/result_store.h"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>

#include "results_test_util.h"

namespace ekb::results {
namespace {

using testing_util::fresh_db_path;
using testing_util::make_result;
using testing_util::make_spec;

// Each test below runs once per engine.
class ResultStoreEngines : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    std::string why;
    if (GetParam() == "postgres" && !testing_util::shared_postgres(&why))
      GTEST_SKIP() << "no PostgreSQL server can run here: " << why;
  }
  std::string fresh_store(const std::string& name) {
    std::string location = testing_util::fresh_store_location(GetParam(), name);
    EXPECT_FALSE(location.empty()) << "creating a database failed";
    return location;
  }
};

INSTANTIATE_TEST_SUITE_P(Engine, ResultStoreEngines, ::testing::Values("sqlite", "postgres"),
                         [](const auto& info) { return info.param; });

TEST_P(ResultStoreEngines, RoundTripsEveryField) {
  ResultStore store = ResultStore::open(fresh_store("a"));
  std::string run = store.begin_or_resume_run(make_spec({"nn.x/1", "nn.y/1"}));

  eval::CandidateResult ok = make_result("nn.x/1", 0, true, 1.75);
  ok.cost.compile_cached = true;
  ok.cost.time_cpu_s = 0.125;
  ok.max_error_ratio = 0.93;  // passed using 93% of the worst element's allowed error
  ok.speedup_low = 1.7;
  ok.speedup_high = 1.8;
  ok.cpu_steal = 0.02;
  ok.baseline_info = {"tvm-tuned", "0.27.0", 64, true, "1a2b3c4d5e6f7a8b", ""};
  eval::CandidateResult bad = make_result("nn.y/1", 2, false, std::nullopt, "gen/y, \"quoted\".c");
  bad.compiled = false;
  bad.error = eval::ErrorKind::Compile;
  bad.message = "y.c:3:1: error: expected ';'\n  int x\n      ^";
  bad.max_abs_error = std::nan("");
  ASSERT_TRUE(store.add(run, ok));
  ASSERT_TRUE(store.add(run, bad));

  std::vector<eval::CandidateResult> back = store.results(run);
  ASSERT_EQ(back.size(), 2u);
  const auto& a = back[0];
  EXPECT_EQ(a.workload, "nn.x/1");
  EXPECT_EQ(a.task, "nn.x");
  EXPECT_EQ(a.backend, "cpu");
  EXPECT_EQ(a.solution, "solutions/k.c");
  EXPECT_TRUE(a.compiled && a.correct);
  EXPECT_EQ(a.error, eval::ErrorKind::None);
  ASSERT_TRUE(a.time && a.baseline && a.speedup);
  EXPECT_DOUBLE_EQ(a.time->median_ms, ok.time->median_ms);
  EXPECT_DOUBLE_EQ(a.time->p25_ms, ok.time->p25_ms);
  EXPECT_DOUBLE_EQ(a.time->p75_ms, ok.time->p75_ms);
  EXPECT_EQ(a.time->runs, 33);
  EXPECT_DOUBLE_EQ(a.baseline->median_ms, 2.0);
  EXPECT_EQ(a.baseline->runs, 21);
  EXPECT_DOUBLE_EQ(*a.speedup, 1.75);
  EXPECT_DOUBLE_EQ(a.max_abs_error, 1e-6);
  EXPECT_DOUBLE_EQ(a.cost.compile_s, 1.5);
  EXPECT_DOUBLE_EQ(a.cost.check_s, 0.25);
  EXPECT_DOUBLE_EQ(a.cost.time_s, 2.0);
  EXPECT_DOUBLE_EQ(a.cost.time_cpu_s, 0.125);
  EXPECT_TRUE(a.cost.compile_cached);
  ASSERT_TRUE(a.max_error_ratio);
  EXPECT_DOUBLE_EQ(*a.max_error_ratio, 0.93);
  EXPECT_DOUBLE_EQ(a.speedup_low, 1.7);
  EXPECT_DOUBLE_EQ(a.speedup_high, 1.8);
  EXPECT_DOUBLE_EQ(a.cpu_steal, 0.02);
  EXPECT_EQ(a.baseline_info, ok.baseline_info);

  const auto& b = back[1];
  EXPECT_EQ(b.sample, 2);
  EXPECT_EQ(b.solution, "gen/y, \"quoted\".c");
  EXPECT_FALSE(b.compiled || b.correct);
  EXPECT_EQ(b.error, eval::ErrorKind::Compile);
  EXPECT_EQ(b.message, bad.message);
  EXPECT_FALSE(b.time || b.baseline || b.speedup);
  EXPECT_TRUE(std::isnan(b.max_abs_error));
  EXPECT_FALSE(b.max_error_ratio);  // nothing was compared
  EXPECT_TRUE(b.baseline_info.is_native_default());

  auto info = store.run(run);
  ASSERT_TRUE(info);
  EXPECT_EQ(info->results, 2);
  EXPECT_EQ(info->correct, 1);
  EXPECT_EQ(info->device_name(), "Test CPU");
  EXPECT_EQ(info->options["trials"], 3);
  EXPECT_EQ(info->selected_workloads(), (std::vector<std::string>{"nn.x/1", "nn.y/1"}));
  EXPECT_FALSE(info->finished);
}

TEST_P(ResultStoreEngines, ReAddingAResultNeverDuplicatesIt) {
  ResultStore store = ResultStore::open(fresh_store("dup"));
  std::string run = store.begin_or_resume_run(make_spec({"nn.x/1"}));
  EXPECT_FALSE(store.is_done(run, "nn.x/1", "solutions/k.c", 0));
  EXPECT_TRUE(store.add(run, make_result("nn.x/1", 0, true, 2.0)));
  EXPECT_TRUE(store.is_done(run, "nn.x/1", "solutions/k.c", 0));
  EXPECT_FALSE(store.add(run, make_result("nn.x/1", 0, false)));  // same key: kept the first
  EXPECT_TRUE(store.add(run, make_result("nn.x/1", 1, false)));   // another sample
  EXPECT_TRUE(store.add(run, make_result("nn.x/1", 0, false, std::nullopt, "other.c")));  // another solution
  auto rs = store.results(run);
  ASSERT_EQ(rs.size(), 3u);
  EXPECT_TRUE(rs[0].correct);
  EXPECT_EQ(store.done(run).size(), 3u);
  EXPECT_TRUE(store.done(run).count(ResultKey{"nn.x/1", "other.c", 0}));
  EXPECT_THROW(store.add("no-such-run", make_result("nn.x/1", 0, true)), StoreError);
}

TEST_P(ResultStoreEngines, RunIdentityAndResumption) {
  std::string path = fresh_store("runs");
  std::string first;
  {
    ResultStore store = ResultStore::open(path);
    first = store.begin_or_resume_run(make_spec({"nn.x/1"}));
    EXPECT_EQ(store.begin_or_resume_run(make_spec({"nn.x/1"})), first);  // unfinished: resumed
  }
  ResultStore store = ResultStore::open(path);  // also across processes / reopen
  EXPECT_EQ(store.begin_or_resume_run(make_spec({"nn.x/1"})), first);
  std::string other = store.begin_or_resume_run(make_spec({"nn.x/1", "nn.y/1"}));
  EXPECT_NE(other, first);  // other parameters: another run
  store.finish_run(first);
  ASSERT_TRUE(store.run(first)->finished);
  std::string again = store.begin_or_resume_run(make_spec({"nn.x/1"}));
  EXPECT_NE(again, first);  // finished: the same experiment starts afresh

  RunSpec named = make_spec({"nn.x/1"});
  named.id = "baseline-sweep";
  EXPECT_EQ(store.begin_or_resume_run(named), "baseline-sweep");
  EXPECT_EQ(store.begin_or_resume_run(named), "baseline-sweep");
  RunSpec clash = make_spec({"nn.z/1"});
  clash.id = "baseline-sweep";
  EXPECT_THROW(store.begin_or_resume_run(clash), StoreError);

  EXPECT_EQ(store.runs().size(), 4u);
  EXPECT_EQ(store.resolve_run("last"), store.runs().front().id);
  EXPECT_EQ(store.resolve_run(first), first);
  EXPECT_THROW(store.resolve_run("nope"), StoreError);
  EXPECT_THROW(store.finish_run("nope"), StoreError);
}

TEST_P(ResultStoreEngines, CalibrationsNewestPerDevice) {
  ResultStore store = ResultStore::open(fresh_store("cal"));
  EXPECT_FALSE(store.calibration("cpu", "Test CPU"));
  runtime::Calibration c;
  c.backend = "cpu";
  c.device = "Test CPU";
  c.created = "2024-01-01T00:00:00Z";
  c.bandwidth_gbs = runtime::summarize_higher_is_better({10});
  c.peak_gflops = runtime::summarize_higher_is_better({100});
  store.add_calibration(c);
  c.created = "2024-02-01T00:00:00Z";
  c.peak_gflops = runtime::summarize_higher_is_better({200});
  store.add_calibration(c);
  c.device = "Other CPU";
  c.peak_gflops = runtime::summarize_higher_is_better({999});
  store.add_calibration(c);
  auto got = store.calibration("cpu", "Test CPU");
  ASSERT_TRUE(got);
  EXPECT_DOUBLE_EQ(got->peak_gflops.best, 200);
  EXPECT_FALSE(store.calibration("cuda", "Test CPU"));
}

TEST(ResultStore, RejectsAFileThatIsNotADatabase) {
  std::string path = fresh_db_path("junk.db");
  { std::ofstream(path) << "this is not sqlite, just text that is long enough to have a header\n"; }
  EXPECT_THROW(ResultStore::open(path), StoreError);
}

}  // namespace
}  // namespace ekb::results
