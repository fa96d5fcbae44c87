// The HTML report (results/html_report.h, `ekb report --html`): its numbers against the results
// database, two runs compared, the links to sources and trajectories; and the page itself opened
// in headless Chromium: no console error, every plot with one mark per run or kernel, every link
// resolving inside the file, a screenshot.
#include "results/html_report.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <set>

#include "codegen/suite_params.h"
#include "eval/timing.h"
#include "results_test_util.h"
#include "run_ekb.h"
#include "runtime/calibration.h"
#include "runtime/subprocess.h"
#include "suite/suite.h"

namespace ekb::results {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using testing_util::fresh_db_path;
using testing_util::make_result;
using testing_util::make_spec;

const suite::Suite& embedded() { return codegen::testing::embedded_suite(); }

// Two runs over four nn workloads, a calibration, and for run A a solutions directory holding one
// solution file and one agent trajectory:
//   A: w0 correct 1.8x, w1 correct 0.7x, w2 mismatch, w3 compile failure
//   B: w0 correct 2.5x, w1 mismatch (newly failing), w2 correct 1.2x (newly correct), w3 absent
struct TwoRuns {
  std::string db = fresh_db_path("html.db");
  fs::path solutions = fs::path(db).parent_path() / "solutions";
  std::vector<std::string> w;
  std::string a, b;

  TwoRuns() {
    for (const auto& e : embedded().workloads())
      if (e.pattern->module.pattern.domain() == "nn" && w.size() < 4) w.push_back(e.full_name());
    ResultStore store = ResultStore::open(db);
    runtime::Calibration c;
    c.backend = "cpu";
    c.device = "Test CPU";
    c.created = runtime::utc_timestamp_now();
    c.bandwidth_gbs = runtime::summarize_higher_is_better({10});
    c.peak_gflops = runtime::summarize_higher_is_better({100});
    c.details["method"] = runtime::calibration_method(ir::Target::Cpu);
    store.add_calibration(c);

    fs::create_directories(solutions / w[0].substr(0, w[0].find('/')));
    std::ofstream(solutions / (w[0] + ".c")) << "/* the solution of " << w[0] << " </script> */\n";
    std::ofstream(solutions / (w[0] + ".trajectory.jsonl"))
        << R"J({"record":"analysis","workload":"x"})J" "\n"
        << R"J({"record":"step","step":0,"layer":"compute","action":"the default lowering","outcome":"kept","ms":2.0,"speedup":1.0})J" "\n"
        << R"J({"record":"step","step":1,"layer":"schedule","action":"sketch","outcome":"kept","ms":1.1,"speedup":1.8,"diff":"+ parallel(y, n)"})J" "\n";
    RunSpec spec = make_spec(w);
    spec.solutions_dir = solutions.string();
    a = store.begin_or_resume_run(spec);
    store.add(a, make_result(w[0], 0, true, 1.8, w[0] + ".c"));
    store.add(a, make_result(w[1], 0, true, 0.7));
    store.add(a, make_result(w[2], 0, false));
    eval::CandidateResult compile = make_result(w[3], 0, false);
    compile.compiled = false;
    compile.error = eval::ErrorKind::Compile;
    compile.message = "k.c:1:1: error: expected ';'";
    store.add(a, compile);
    store.finish_run(a);
    store.record_load(a, 3.5, 2);

    RunSpec spec_b = make_spec({w[0], w[1], w[2]});
    spec_b.options["trials"] = 5;  // another run id
    b = store.begin_or_resume_run(spec_b);
    store.add(b, make_result(w[0], 0, true, 2.5));
    store.add(b, make_result(w[1], 0, false));
    store.add(b, make_result(w[2], 0, true, 1.2));
    store.finish_run(b);
  }
};

// The curve's value at the first p above `p`.
double curve_at(const json& curve, double p) {
  for (const auto& point : curve)
    if (point[0].get<double>() > p) return point[1].get<double>();
  return -1;
}

TEST(HtmlReport, TheDataHoldsEachRunsNumbersResultsAndLinks) {
  TwoRuns t;
  ResultStore store = ResultStore::open(t.db);
  const RunReport a = build_run_report(store, t.a, embedded()), b = build_run_report(store, t.b, embedded());
  const json data = html_report_data({&a, &b}, true);
  ASSERT_EQ(data["runs"].size(), 2u);
  const json& ra = data["runs"][0];

  // The summary is the report's: 2 of 4 correct, 1 of 4 faster than the baseline.
  EXPECT_DOUBLE_EQ(ra["summary"]["correct_at_1"].get<double>(), a.summary.correct_at_k.at(1));
  EXPECT_DOUBLE_EQ(ra["summary"]["correct_at_1"].get<double>(), 0.5);
  EXPECT_DOUBLE_EQ(ra["summary"]["fast_at"]["1.0"].get<double>(), 0.25);
  EXPECT_TRUE(ra["groups"]["domain"].contains("nn")) << ra["groups"].dump();
  // The curve is Fast_p@1 at every p: 2 of 4 below 0.7x, 1 of 4 between 0.7x and 1.8x, none above.
  EXPECT_DOUBLE_EQ(curve_at(ra["curve"], 0.5), 0.5);
  EXPECT_DOUBLE_EQ(curve_at(ra["curve"], 1.0), 0.25);
  EXPECT_DOUBLE_EQ(curve_at(ra["curve"], 1.9), 0.0);

  // Every result, with its workload's cost for the roofline; the calibration's roofs.
  ASSERT_EQ(ra["results"].size(), 4u);
  EXPECT_GT(ra["results"][0]["ops"].get<double>(), 0);
  EXPECT_GT(ra["results"][0]["bytes"].get<double>(), 0);
  EXPECT_DOUBLE_EQ(ra["calibration"]["peak_gflops"].get<double>(), 100);
  EXPECT_EQ(ra["results"][3]["error"], "compile");
  // The load the run saw, for the machine's section; the other run has none recorded.
  EXPECT_DOUBLE_EQ(ra["device"]["load"]["max_1min_average"].get<double>(), 3.5);
  EXPECT_FALSE(data["runs"][1]["device"].contains("load"));

  // The solution file and the trajectory beside it, linked from the row.
  const json& row = ra["results"][0];
  ASSERT_TRUE(row.contains("source")) << row.dump();
  EXPECT_NE(ra["sources"][row["source"].get<std::string>()]["text"].get<std::string>().find("the solution of"),
            std::string::npos);
  ASSERT_TRUE(row.contains("trajectory")) << row.dump();
  const json& steps = ra["trajectories"][row["trajectory"].get<std::string>()]["steps"];
  ASSERT_EQ(steps.size(), 2u);
  EXPECT_EQ(steps[1]["diff"], "+ parallel(y, n)");
  EXPECT_FALSE(ra["results"][1].contains("source"));  // its file does not exist

  // The comparison: per workload what changed, and the ratio of the speedups.
  std::map<std::string, json> by_workload;
  for (const auto& c : data["comparison"]) by_workload[c["workload"].get<std::string>()] = c;
  EXPECT_EQ(by_workload[t.w[1]]["change"], "newly failing");
  EXPECT_EQ(by_workload[t.w[2]]["change"], "newly correct");
  EXPECT_EQ(by_workload[t.w[3]]["change"], "only in A");
  EXPECT_NEAR(by_workload[t.w[0]]["ratio"].get<double>(), 2.5 / 1.8, 1e-9);
}

// The page as a browser shows it. Chromium logs every console message ("CONSOLE") on stderr, and
// an uncaught exception is one: the check is shown to see one on a page that throws.
struct Browser {
  std::string program = fs::exists("/usr/bin/chromium") ? "/usr/bin/chromium" : "";
  fs::path profile;

  ekb::runtime::CommandResult run(const std::vector<std::string>& args) {
    std::vector<std::string> argv = {program, "--headless=new", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                                     "--user-data-dir=" + profile.string(), "--enable-logging=stderr", "--v=0"};
    argv.insert(argv.end(), args.begin(), args.end());
    ekb::runtime::CommandOptions o;
    o.timeout_s = 120;
    return ekb::runtime::run_command(argv, o);
  }
};

std::vector<std::string> console_lines(const std::string& output) {
  std::vector<std::string> out;
  std::istringstream lines(output);
  for (std::string line; std::getline(lines, line);)
    if (line.find(":CONSOLE") != std::string::npos) out.push_back(line);
  return out;
}

// The number of elements of class "mark" in the plot whose group has id `plot`.
int marks_in(const std::string& dom, const std::string& plot) {
  const size_t at = dom.find("id=\"" + plot + "\"");
  if (at == std::string::npos) return -1;
  const std::string svg = dom.substr(at, dom.find("</svg>", at) - at);
  int n = 0;
  for (size_t k = svg.find("class=\"mark\""); k != std::string::npos; k = svg.find("class=\"mark\"", k + 1)) ++n;
  return n;
}

TEST(HtmlReport, InChromiumThePageDrawsEveryPlotWithoutAConsoleErrorAndItsLinksResolve) {
  Browser browser;
  if (browser.program.empty() || !fs::exists(default_chart_library_path()))
    GTEST_SKIP() << "needs chromium and libjs-d3 (scripts/install-deps.sh)";
  TwoRuns t;
  const fs::path dir = fs::path(t.db).parent_path();
  browser.profile = dir / "chromium-profile";
  const fs::path page = dir / "report.html", shot = dir / "report.png";
  auto r = ekb::testing_cli::run_ekb("report --db " + t.db + " " + t.a + " " + t.b + " --compare --html " + page.string());
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("newly failing"), std::string::npos) << r.out;

  // The console check sees an error where there is one.
  std::ofstream(dir / "throws.html") << "<html><body><script>throw new Error('deliberate');</script></body></html>";
  const auto thrown = browser.run({"--dump-dom", "file://" + (dir / "throws.html").string()});
  ASSERT_FALSE(console_lines(thrown.output).empty()) << "the browser's console is not visible:\n" << thrown.output;

  const auto dom = browser.run({"--dump-dom", "file://" + page.string()});
  ASSERT_TRUE(dom.started && !dom.timed_out) << dom.output;
  EXPECT_TRUE(console_lines(dom.output).empty()) << console_lines(dom.output).front();
  // One curve per timed run; one point per correct timed result (A: 2, B: 2) in the distribution
  // and on the roofline.
  EXPECT_EQ(marks_in(dom.output, "plot-fastp"), 2);
  EXPECT_EQ(marks_in(dom.output, "plot-distribution"), 4);
  EXPECT_EQ(marks_in(dom.output, "plot-roofline-cpu"), 4);
  // Every in-page link has its target; the source and the trajectory are among them.
  std::set<std::string> ids, targets;
  const std::regex id(R"(id="([^"]+)\")"), href(R"(href="#([^"]*)\")");
  for (auto it = std::sregex_iterator(dom.output.begin(), dom.output.end(), id); it != std::sregex_iterator(); ++it)
    ids.insert((*it)[1]);
  for (auto it = std::sregex_iterator(dom.output.begin(), dom.output.end(), href); it != std::sregex_iterator(); ++it)
    targets.insert((*it)[1]);
  EXPECT_NE(dom.output.find("peak 1-minute load average 3.5 on 2 cores: other processes competed"), std::string::npos);
  EXPECT_GE(targets.size(), 10u);
  for (const std::string& target : targets) EXPECT_TRUE(ids.count(target)) << "#" << target << " leads nowhere";
  EXPECT_TRUE(std::any_of(targets.begin(), targets.end(), [](const std::string& s) { return s.find("-src") != std::string::npos; }));
  EXPECT_TRUE(std::any_of(targets.begin(), targets.end(), [](const std::string& s) { return s.find("-traj") != std::string::npos; }));

  const auto screenshot = browser.run({"--window-size=1280,2400", "--screenshot=" + shot.string(), "file://" + page.string()});
  ASSERT_TRUE(fs::exists(shot)) << screenshot.output;
  EXPECT_GT(fs::file_size(shot), 20000u);
}

}  // namespace
}  // namespace ekb::results
