// `ekb report`, `ekb runs` and `ekb calibrate` end to end: runs the built binary on a database
// written through the library.
#include <gtest/gtest.h>

#include "run_ekb.h"
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>

#include "results_test_util.h"
#include "runtime/cpu_backend.h"
#include "runtime/cpu_calibration.h"
#include "suite/suite.h"

namespace ekb::results {
namespace {

using testing_util::fresh_db_path;
using testing_util::make_result;
using testing_util::make_spec;

using Output = ekb::testing_cli::EkbResult;
using ekb::testing_cli::slurp;

// Runs `ekb ARGS` (shell text) and captures both streams.
Output ekb(const std::string& args) { return ekb::testing_cli::run_ekb(args); }

bool contains(const std::string& s, const std::string& what) { return s.find(what) != std::string::npos; }

std::vector<std::string> some_workloads() {
  static const suite::Suite s = suite::Suite::load();
  std::vector<std::string> out;
  std::set<std::string> domains;
  for (const auto& w : s.workloads())
    if (domains.insert(w.pattern->module.pattern.domain()).second) out.push_back(w.full_name());
  return out;  // the first workload of each domain
}

// A database with one run: correct, mismatching and failing-to-compile results.
std::string make_db(std::string& run, const std::string& device = "Test CPU") {
  std::string path = fresh_db_path("report.db");
  ResultStore store = ResultStore::open(path);
  auto ws = some_workloads();
  run = store.begin_or_resume_run(make_spec(ws, device));
  store.add(run, make_result(ws[0], 0, true, 1.8));
  store.add(run, make_result(ws[1], 0, true, 0.7));
  eval::CandidateResult mismatch = make_result(ws[2], 0, false);
  mismatch.message = "output Y[0]: got 3, expected 2, off by one\nsecond line of detail";
  store.add(run, mismatch);
  eval::CandidateResult compile = make_result(ws[3], 0, false);
  compile.compiled = false;
  compile.error = eval::ErrorKind::Compile;
  compile.message = "k.c:1:1: error: " + std::string(300, 'x');
  store.add(run, compile);
  return path;
}

TEST(ReportCli, TablesFailuresAndCsv) {
  std::string run;
  std::string db = make_db(run);
  std::string csv = fresh_db_path("rows.csv");
  Output r = ekb("report " + run + " --db " + db + " --csv " + csv);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "run " + run)) << r.out;
  EXPECT_TRUE(contains(r.out, "by domain"));
  EXPECT_TRUE(contains(r.out, "by level"));
  EXPECT_TRUE(contains(r.out, "CORRECT@1"));
  EXPECT_TRUE(contains(r.out, "FAST@1.0"));
  EXPECT_TRUE(contains(r.out, "mismatch (1)"));
  EXPECT_TRUE(contains(r.out, "compile (1)"));
  EXPECT_TRUE(contains(r.out, "got 3, expected 2, off by one ..."));  // first line only
  EXPECT_FALSE(contains(r.out, "second line of detail"));
  EXPECT_FALSE(contains(r.out, std::string(200, 'x')));              // long messages shortened
  EXPECT_TRUE(contains(r.out, "no calibration"));

  std::string rows = slurp(csv);
  EXPECT_EQ(rows.rfind("run,workload,", 0), 0u);
  EXPECT_TRUE(contains(rows, "\"output Y[0]: got 3, expected 2, off by one\nsecond line of detail\""));
  EXPECT_TRUE(contains(rows, std::string(300, 'x')));  // the CSV keeps everything

  Output pattern = ekb("report last --db " + db + " --by pattern");
  ASSERT_EQ(pattern.code, 0) << pattern.err;
  EXPECT_TRUE(contains(pattern.out, "by pattern"));
  EXPECT_FALSE(contains(pattern.out, "by domain"));

  std::string json = fresh_db_path("r.json");
  ASSERT_EQ(ekb("report " + run + " --db " + db + " --json " + json).code, 0);
  EXPECT_TRUE(contains(slurp(json), "\"schema\": \"ekb.results/1\""));
}

TEST(ReportCli, AnUntimedRunHasNoFastScoresRatherThanZero) {
  std::string path = fresh_db_path("untimed.db");
  ResultStore store = ResultStore::open(path);
  auto ws = some_workloads();
  RunSpec spec = make_spec(ws);
  spec.options["timing"] = false;  // what `ekb eval --no-timing` records
  std::string run = store.begin_or_resume_run(spec);
  store.add(run, make_result(ws[0], 0, true));  // correct, no speedup
  store.add(run, make_result(ws[1], 0, false));
  Output r = ekb("report " + run + " --db " + path);
  ASSERT_EQ(r.code, 0) << r.err;
  // Fast@p is unknown, not zero: in the summary line and in the tables' FAST columns.
  EXPECT_TRUE(contains(r.out, "Fast@p    0.0: -  0.5: -  0.8: -  1.0: -  1.5: -  2.0: -")) << r.out;
  std::istringstream lines(r.out);
  int all_rows = 0;
  for (std::string line; std::getline(lines, line);) {
    std::istringstream words(line);
    std::vector<std::string> w{std::istream_iterator<std::string>(words), std::istream_iterator<std::string>()};
    if (w.size() != 10 || w[0] != "all") continue;
    ++all_rows;
    EXPECT_EQ(w[6], "-") << line;  // FAST@1.0
    EXPECT_EQ(w[7], "-") << line;  // FAST@1.5
  }
  EXPECT_EQ(all_rows, 2) << r.out;  // by domain, by level
}

TEST(ReportCli, HelpForEachCommand) {
  for (const char* cmd : {"report", "runs", "calibrate"}) {
    Output r = ekb(std::string(cmd) + " --help");
    EXPECT_EQ(r.code, 0) << cmd;
    EXPECT_TRUE(contains(r.out, "--db")) << cmd;
  }
}

TEST(ReportCli, RunsListsTheRuns) {
  std::string run;
  std::string db = make_db(run);
  Output r = ekb("runs --db " + db);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(contains(r.out, run));
  EXPECT_TRUE(contains(r.out, "unfinished"));
  EXPECT_TRUE(contains(r.out, "1 runs in"));
  Output j = ekb("runs --json --db " + db);
  ASSERT_EQ(j.code, 0);
  EXPECT_TRUE(contains(j.out, "\"results\": 4"));
}

TEST(ReportCli, MistakesAreUsageErrors) {
  std::string run;
  std::string db = make_db(run);
  Output unknown = ekb("report no-such-run --db " + db);
  EXPECT_EQ(unknown.code, 2);
  EXPECT_TRUE(contains(unknown.err, "no run 'no-such-run'")) << unknown.err;
  std::string missing = fresh_db_path("missing.db");
  EXPECT_EQ(ekb("report last --db " + missing).code, 2);
  EXPECT_EQ(ekb("runs --db " + missing).code, 2);
  EXPECT_FALSE(std::filesystem::exists(missing)) << "reading must not create the database";
  EXPECT_NE(ekb("report " + run + " --db " + db + " --by color").code, 0);
}

TEST(ReportCli, CalibrateFeedsTheRoofline) {
  std::string cache = fresh_db_path("cache");
  setenv("EKB_CACHE_DIR", cache.c_str(), 1);
  std::string run;
  std::string db = make_db(run, runtime::cpu_model_name());
  Output cal = ekb("calibrate --quick --db " + db);
  ASSERT_EQ(cal.code, 0) << cal.err;
  EXPECT_TRUE(contains(cal.out, "memory bandwidth"));
  EXPECT_TRUE(contains(cal.out, "peak FP32"));
  EXPECT_TRUE(std::filesystem::exists(cache + "/calibration"));
  Output r = ekb("report " + run + " --db " + db);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "roofline: ")) << r.out;
  EXPECT_FALSE(contains(r.out, "no calibration")) << r.out;
  // (cuda and opencl calibrate where a device exists: tests/eval/*_calibration_test.cpp)
  EXPECT_NE(ekb("calibrate --backend tpu --quick --db " + db).code, 0);
  unsetenv("EKB_CACHE_DIR");
}

}  // namespace
}  // namespace ekb::results
