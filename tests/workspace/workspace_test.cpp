// Workspaces for external coding agents end to end (docs/AGENTS.md): create, check through the real
// harness, collect, the driver script with a scripted agent, and `ekb eval` of what it collected.
#include <fmt/core.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "eval/workload_reference.h"
#include "runtime/paths.h"
#include "run_ekb.h"
#include "suite/suite.h"
#include "test_paths.h"

namespace {

namespace fs = std::filesystem;
using ekb::testing_cli::run_ekb;
using ekb::testing_cli::slurp;

// A 480-sample f32 filter: its reference is instant and a correct kernel is one line.
constexpr const char* kWorkload = "audio.preemphasis/kws_frame_480";

constexpr const char* kCorrect =
    "void ekb_main(const float* x, float* y, int64_t N) {\n"
    "  for (int64_t n = 0; n < N; ++n) y[n] = (float)((double)x[n] - 0.97 * (n ? (double)x[n - 1] : 0.0));\n"
    "}\n";
constexpr const char* kWrong =  // forgets the filter: every element but the first is off
    "void ekb_main(const float* x, float* y, int64_t N) {\n"
    "  for (int64_t n = 0; n < N; ++n) y[n] = x[n];\n"
    "}\n";
constexpr const char* kBroken = "void ekb_main(const float* x, float* y, int64_t N) { y[0] = ; }\n";

bool contains(const std::string& s, const std::string& what) { return s.find(what) != std::string::npos; }

void write(const fs::path& p, const std::string& text) { std::ofstream(p, std::ios::binary) << text; }

// A fresh directory private to the test; removed at the start so reruns begin clean.
fs::path scratch(const std::string& stem) {
  fs::path dir = ekb::testing::private_temp_path(stem);
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

std::string shell(const fs::path& p) { return "'" + p.string() + "'"; }

std::vector<nlohmann::json> check_log(const fs::path& ws) {
  std::vector<nlohmann::json> out;
  std::ifstream in(ws / ".ekb" / "checks.jsonl");
  std::string line;
  while (std::getline(in, line))
    if (!line.empty()) out.push_back(nlohmann::json::parse(line));
  return out;
}

TEST(Workspace, CreateHoldsTheTaskAndNothingToCopyTheAnswerFrom) {
  fs::path ws = scratch("ws_create") / "task";
  // A key in the environment never reaches the workspace.
  const std::string secret = "sk-ant-test-secret-0123456789";
  ASSERT_EQ(::setenv("ANTHROPIC_API_KEY", secret.c_str(), 1), 0);
  auto r = run_ekb(std::string("workspace create ") + kWorkload + " " + shell(ws));
  ::unsetenv("ANTHROPIC_API_KEY");
  ASSERT_EQ(r.code, 0) << r.err;

  std::set<std::string> files;
  for (const auto& e : fs::recursive_directory_iterator(ws))
    if (e.is_regular_file()) files.insert(fs::relative(e.path(), ws).string());
  EXPECT_EQ(files, (std::set<std::string>{"TASK.md", "README.md", "solution.c", "ekb_abi.h", "check",
                                          ".ekb/workspace.json", ".ekb/checks.jsonl"}));

  const std::string task = slurp(ws / "TASK.md");
  EXPECT_TRUE(contains(task, "void ekb_main(const float* x")) << task;
  EXPECT_TRUE(contains(task, "x[n] - COEF * pad(x, 0)[n - 1]"));  // the IR: what to compute
  EXPECT_TRUE(contains(task, "Write the complete source file to `solution.c`"));
  EXPECT_TRUE(contains(slurp(ws / "README.md"), "./check"));
  EXPECT_EQ(slurp(ws / "ekb_abi.h"), slurp(std::string(EKB_SOURCE_DIR) + "/include/ekb/ekb_abi.h"));
  const std::string check = slurp(ws / "check");
  EXPECT_TRUE(contains(check, fs::canonical(EKB_BINARY).string() + "' workspace check")) << check;
  struct stat st {};
  ASSERT_EQ(::stat((ws / "check").c_str(), &st), 0);
  EXPECT_TRUE(st.st_mode & S_IXUSR);
  // The skeleton has the signature and no computation.
  const std::string skeleton = slurp(ws / "solution.c");
  EXPECT_TRUE(contains(skeleton, "void ekb_main(const float* x"));
  EXPECT_FALSE(contains(skeleton, "for ("));

  // No file holds the baseline's code or a reference output value.
  auto emitted = run_ekb(std::string("emit ") + kWorkload);
  ASSERT_EQ(emitted.code, 0);
  std::vector<std::string> baseline_lines;
  std::istringstream lines(emitted.out);
  for (std::string line; std::getline(lines, line);)
    if (contains(line, "for (") || contains(line, "0.97")) baseline_lines.push_back(line);
  ASSERT_FALSE(baseline_lines.empty());
  auto suite = ekb::suite::Suite::load();
  auto entry = suite.find_workload(kWorkload);
  ASSERT_TRUE(entry);
  ekb::ir::Instance inst = ekb::suite::bind_workload(*entry);
  ekb::eval::WorkloadReference reference(inst);
  const auto& expected = reference.random_trial(0).expected.at(0);
  for (const auto& f : files) {
    const std::string text = slurp(ws / f);
    EXPECT_FALSE(contains(text, secret)) << f;
    for (const auto& line : baseline_lines) EXPECT_FALSE(contains(text, line)) << f << " holds baseline code: " << line;
    for (int k = 1; k < 4; ++k) {
      const double v = expected.as_double(k);
      const float as_float = static_cast<float>(v);
      EXPECT_FALSE(contains(text, std::string(reinterpret_cast<const char*>(&as_float), sizeof as_float))) << f;
      EXPECT_FALSE(contains(text, fmt::format("{:.6f}", v))) << f << " holds reference output " << v;
    }
  }
  // Creating over a workspace is refused.
  EXPECT_EQ(run_ekb(std::string("workspace create ") + kWorkload + " " + shell(ws)).code, 2);
}

TEST(Workspace, CheckReportsCompileErrorsMismatchesAndSpeedThenCollectCountsThem) {
  fs::path root = scratch("ws_check");
  fs::path ws = root / "task";
  ASSERT_EQ(run_ekb(std::string("workspace create ") + kWorkload + " " + shell(ws)).code, 0);
  auto check = [&] { return run_ekb("workspace check " + shell(ws)); };

  write(ws / "solution.c", kBroken);
  auto broken = check();
  EXPECT_EQ(broken.code, 1) << broken.out << broken.err;
  EXPECT_TRUE(contains(broken.out, "check #1")) << broken.out;
  EXPECT_TRUE(contains(broken.out, "compile: FAILED (compile)")) << broken.out;
  EXPECT_TRUE(contains(broken.out, "expected expression")) << broken.out;  // the compiler's own words

  write(ws / "solution.c", kWrong);
  auto wrong = check();
  EXPECT_EQ(wrong.code, 1) << wrong.out << wrong.err;
  EXPECT_TRUE(contains(wrong.out, "correctness: FAILED (mismatch)")) << wrong.out;
  EXPECT_TRUE(contains(wrong.out, "y")) << wrong.out;
  EXPECT_TRUE(contains(wrong.out, "got")) << wrong.out;
  EXPECT_TRUE(contains(wrong.out, "expected")) << wrong.out;
  EXPECT_TRUE(contains(wrong.out, "allowed")) << wrong.out;  // the tolerance
  EXPECT_TRUE(contains(wrong.out, "elements differ")) << wrong.out;

  write(ws / "solution.c", kCorrect);
  auto right = check();
  EXPECT_EQ(right.code, 0) << right.out << right.err;
  EXPECT_TRUE(contains(right.out, "correctness: ok")) << right.out;
  EXPECT_TRUE(contains(right.out, "baseline: ")) << right.out;
  EXPECT_TRUE(contains(right.out, "speedup:  ")) << right.out;
  EXPECT_TRUE(contains(right.out, "p25")) << right.out;

  // Through the script the agent runs, from another directory.
  auto scripted = std::system(("cd / && " + shell(ws / "check") + " --no-timing >/dev/null 2>&1").c_str());
  EXPECT_EQ(WEXITSTATUS(scripted), 0);

  auto log = check_log(ws);
  ASSERT_EQ(log.size(), 4u);
  EXPECT_EQ(log[0]["error"], "compile");
  EXPECT_EQ(log[1]["error"], "mismatch");
  EXPECT_TRUE(log[2]["correct"].get<bool>());
  EXPECT_TRUE(log[2]["speedup"].is_number());
  EXPECT_EQ(log[3]["number"], 4);
  for (const auto& c : log) EXPECT_GT(c["wall_s"].get<double>(), 0);

  // The count comes from the log outside the folder: emptying the one inside changes nothing.
  write(ws / ".ekb" / "checks.jsonl", "");
  fs::path out = root / "solutions";
  auto collected = run_ekb("workspace collect " + shell(ws) + " --out " + shell(out) + " --agent tester");
  ASSERT_EQ(collected.code, 0) << collected.err;
  fs::path dir = out / "audio.preemphasis";
  EXPECT_EQ(slurp(dir / "kws_frame_480.s0.c"), kCorrect);
  auto meta = nlohmann::json::parse(slurp(dir / "kws_frame_480.s0.meta.json"));
  EXPECT_EQ(meta["method"], "agent:tester");
  EXPECT_EQ(meta["status"], "ok");
  EXPECT_EQ(meta["sample"], 0);
  EXPECT_EQ(meta["check_calls"], 4);
  EXPECT_EQ(meta["ledger"]["evaluations"], 4);
  EXPECT_GT(meta["ledger"]["wall_s"].get<double>(), 0);
  EXPECT_EQ(meta["ledger"]["llm_calls"], 0);  // no transcript: nothing known
  EXPECT_EQ(meta["backend"], "cpu");
  for (const char* key : {"profile", "model", "endpoint_kind", "prompt_hash", "temperature", "latency_s", "cached"})
    EXPECT_TRUE(meta.contains(key)) << key;
}

// The check ledger kept outside the folder (docs/AGENTS.md, "Counting"): whatever an agent does to
// the folder or to the ledger, collect either counts every check or reports the sample failed.
TEST(Workspace, ATamperedOrDeletedLedgerIsReportedAtCollectNeverSilentlyCounted) {
  fs::path root = scratch("ws_ledger");
  fs::path ws = root / "task";
  fs::path out = root / "solutions";
  ASSERT_EQ(run_ekb(std::string("workspace create ") + kWorkload + " " + shell(ws)).code, 0);
  write(ws / "solution.c", kCorrect);
  for (int i = 0; i < 2; ++i) ASSERT_EQ(run_ekb("workspace check --no-timing " + shell(ws)).code, 0);

  const std::string id = nlohmann::json::parse(slurp(ws / ".ekb" / "workspace.json"))["id"];
  const fs::path ledger = fs::path(ekb::runtime::default_cache_dir()) / "workspaces" / (id + ".jsonl");
  const std::string ledger_text = slurp(ledger), info_text = slurp(ws / ".ekb" / "workspace.json");
  ASSERT_EQ(std::count(ledger_text.begin(), ledger_text.end(), '{'), 2) << ledger_text;
  int sample = 0;
  auto collect = [&] {
    auto r = run_ekb("workspace collect " + shell(ws) + " --out " + shell(out) + " --agent tester");
    EXPECT_TRUE(contains(r.out, "collected sample")) << r.out << r.err;
    auto meta = nlohmann::json::parse(slurp(out / "audio.preemphasis" /
                                            ("kws_frame_480.s" + std::to_string(sample++) + ".meta.json")));
    write(ledger, ledger_text);  // as it was, for the next case
    write(ws / ".ekb" / "workspace.json", info_text);
    return meta;
  };

  // Emptying the copy inside the folder changes nothing.
  write(ws / ".ekb" / "checks.jsonl", "");
  auto intact = collect();
  EXPECT_EQ(intact["status"], "ok");
  EXPECT_EQ(intact["check_calls"], 2);

  fs::remove(ledger);
  auto deleted = collect();
  EXPECT_EQ(deleted["status"], "failed");
  EXPECT_TRUE(contains(deleted["error"], "the check ledger does not verify")) << deleted;
  EXPECT_TRUE(contains(deleted["error"], "missing")) << deleted;

  // A fresh id points collect at no ledger; the copy inside is not a fallback.
  auto info = nlohmann::json::parse(info_text);
  info["id"] = "0123456789abcdef";
  write(ws / ".ekb" / "workspace.json", info.dump());
  auto other_id = collect();
  EXPECT_EQ(other_id["status"], "failed");
  EXPECT_TRUE(contains(other_id["error"], "missing")) << other_id;

  // A line removed: the next line's link to it breaks.
  write(ledger, ledger_text.substr(ledger_text.find("\n{", 1) + 1));
  auto removed = collect();
  EXPECT_EQ(removed["status"], "failed");
  EXPECT_TRUE(contains(removed["error"], "check record 1 of the ledger was edited, removed or inserted")) << removed;

  // A line edited: its HMAC no longer matches.
  std::string edited = ledger_text;
  edited.replace(edited.find("\"wall_s\":"), 9, "\"wall_s\":0,\"x\":");
  write(ledger, edited);
  auto forged = collect();
  EXPECT_EQ(forged["status"], "failed");
  EXPECT_TRUE(contains(forged["error"], "edited, removed or inserted")) << forged;
  EXPECT_FALSE(fs::exists(out / "audio.preemphasis" / "kws_frame_480.s4.c"));  // a failed sample has no code
}

TEST(Workspace, CollectReadsTheTranscriptAndRecordsAnUntouchedSkeletonAsNoCode) {
  fs::path root = scratch("ws_collect");
  fs::path out = root / "solutions";
  fs::path transcript = root / "claude.json";
  write(transcript,
        R"({"type":"result","subtype":"success","is_error":false,"duration_ms":64000,"num_turns":7,)"
        R"("total_cost_usd":0.4125,"usage":{"input_tokens":1200,"cache_creation_input_tokens":3000,)"
        R"("cache_read_input_tokens":20000,"output_tokens":4500},)"
        R"("modelUsage":{"claude-haiku":{"outputTokens":20},"claude-sonnet-4":{"outputTokens":4480}}})");
  for (int i = 0; i < 2; ++i) {
    fs::path ws = root / ("task" + std::to_string(i));
    ASSERT_EQ(run_ekb(std::string("workspace create ") + kWorkload + " " + shell(ws)).code, 0);
    if (i == 0) write(ws / "solution.c", kCorrect);
    auto r = run_ekb("workspace collect " + shell(ws) + " --out " + shell(out) + " --transcript " + shell(transcript) +
                     " --wall-s 65.5");
    ASSERT_EQ(r.code, 0) << r.err;
  }
  fs::path dir = out / "audio.preemphasis";
  auto first = nlohmann::json::parse(slurp(dir / "kws_frame_480.s0.meta.json"));
  EXPECT_EQ(first["method"], "agent:claude-code");
  EXPECT_EQ(first["model"], "claude-sonnet-4");
  EXPECT_EQ(first["status"], "ok");
  EXPECT_EQ(first["ledger"]["llm_calls"], 7);
  EXPECT_EQ(first["ledger"]["input_tokens"], 24200);
  EXPECT_EQ(first["ledger"]["output_tokens"], 4500);
  EXPECT_DOUBLE_EQ(first["ledger"]["cost_usd"].get<double>(), 0.4125);
  EXPECT_DOUBLE_EQ(first["ledger"]["wall_s"].get<double>(), 65.5);
  EXPECT_EQ(first["check_calls"], 0);
  EXPECT_EQ(first["transcript"], "kws_frame_480.s0.transcript.json");
  EXPECT_EQ(slurp(dir / "kws_frame_480.s0.transcript.json"), slurp(transcript));
  EXPECT_TRUE(fs::exists(dir / "kws_frame_480.s0.c"));

  // The second workspace kept its skeleton: sample 1 (the next free one) failed with no code.
  auto second = nlohmann::json::parse(slurp(dir / "kws_frame_480.s1.meta.json"));
  EXPECT_EQ(second["sample"], 1);
  EXPECT_EQ(second["status"], "no_code");
  EXPECT_TRUE(contains(second["error"].get<std::string>(), "skeleton"));
  EXPECT_FALSE(fs::exists(dir / "kws_frame_480.s1.c"));

  // An explicit sample that is taken is refused rather than overwritten.
  auto again = run_ekb("workspace collect " + shell(root / "task0") + " --out " + shell(out) + " --sample 0");
  EXPECT_EQ(again.code, 2);
  EXPECT_TRUE(contains(again.err, "already exists")) << again.err;
  EXPECT_EQ(run_ekb("workspace collect " + shell(root) + " --out " + shell(out)).code, 2);  // not a workspace
}

// The whole flow as a benchmark run does it: the driver script creates workspaces, runs a scripted
// agent under a time limit, collects; `ekb eval` scores the collection with the ledger attached.
TEST(Workspace, DriverScriptWithAScriptedAgentThenEval) {
  fs::path root = scratch("ws_driver");
  fs::path agent = root / "fake_agent.sh";
  // Solves the filter (checking twice), hangs on the other workload until the time limit, and
  // prints a Claude Code-style result as its transcript.
  write(agent, std::string("#!/bin/sh\n"
                           "if [ \"$EKB_WORKLOAD\" = \"") + kWorkload + "\" ]; then\n"
               "  cat > \"$EKB_SOLUTION_FILE\" <<'EOF'\n" + kCorrect + "EOF\n"
               "  ./check --no-timing >&2\n"
               "  ./check >&2 || exit 1\n"
               "else\n"
               "  sleep 60\n"
               "fi\n"
               "echo '{\"type\":\"result\",\"num_turns\":3,\"total_cost_usd\":0.25,"
               "\"usage\":{\"input_tokens\":900,\"output_tokens\":300}}'\n");
  const std::string hang = "img.absdiff/vww_96x96_u8";
  fs::path out = root / "solutions", work = root / "work";
  // Two runs into one collection: a generous limit for the solver (checks compile and time on a
  // possibly loaded machine), a short one for the agent that hangs.
  auto drive = [&](const std::string& workload, int timeout_s) {
    std::string cmd = "EKB=" + shell(EKB_BINARY) + " " + shell(fs::path(EKB_SOURCE_DIR) / "scripts" / "run_agent.sh") +
                      " --command 'sh " + agent.string() + "' --out " + shell(out) + " --work " + shell(work) +
                      " --timeout " + std::to_string(timeout_s) + " fake " + workload + " >> " +
                      shell(root / "driver.log") + " 2>&1";
    return WEXITSTATUS(std::system(cmd.c_str()));
  };
  ASSERT_EQ(drive(kWorkload, 300), 0) << slurp(root / "driver.log");
  ASSERT_EQ(drive(hang, 3), 0) << slurp(root / "driver.log");
  EXPECT_TRUE(contains(slurp(root / "driver.log"), "timed out after 3 s")) << slurp(root / "driver.log");

  auto solved = nlohmann::json::parse(slurp(out / "audio.preemphasis" / "kws_frame_480.s0.meta.json"));
  EXPECT_EQ(solved["method"], "agent:fake");
  EXPECT_EQ(solved["check_calls"], 2);
  auto hung = nlohmann::json::parse(slurp(out / "img.absdiff" / "vww_96x96_u8.s0.meta.json"));
  EXPECT_EQ(hung["status"], "no_code");
  EXPECT_LT(hung["ledger"]["wall_s"].get<double>(), 40);  // the limit held

  fs::path db = root / "results.db", json_path = root / "results.json";
  auto eval = run_ekb("eval --db " + shell(db) + " --json " + shell(json_path) + " --min-time 0.01 -s " + shell(out) +
                      " " + kWorkload + " " + hang);
  ASSERT_EQ(eval.code, 0) << eval.err << eval.out;
  auto doc = nlohmann::json::parse(slurp(json_path));
  ASSERT_EQ(doc["results"].size(), 2u);
  for (const auto& r : doc["results"]) {
    EXPECT_EQ(r["method"], "agent:fake");
    if (r["workload"] == kWorkload) {
      EXPECT_TRUE(r["correct"].get<bool>()) << r.dump();
      EXPECT_EQ(r["ledger"]["evaluations"], 2);
      EXPECT_EQ(r["ledger"]["llm_calls"], 3);
      EXPECT_DOUBLE_EQ(r["ledger"]["cost_usd"].get<double>(), 0.25);
    } else {
      EXPECT_EQ(r["error"], "no_code");
      EXPECT_FALSE(r["correct"].get<bool>());
    }
  }
  const auto& summary = doc["summary"];
  EXPECT_EQ(summary["workloads"], 2);
  EXPECT_DOUBLE_EQ(summary["correct_at_1"].get<double>(), 0.5);  // the failed sample counts
  // The hung agent was killed before printing its usage: its ledger has only its wall time.
  EXPECT_EQ(summary["ledger"]["llm_calls"], 3);
  EXPECT_EQ(summary["ledger"]["input_tokens"], 900);
  EXPECT_EQ(summary["ledger"]["evaluations"], 2);
  EXPECT_EQ(summary["ledger"]["results"], 2);
  EXPECT_EQ(summary["by_method"]["agent:fake"]["n"], 2);

  auto report = run_ekb("report last --db " + shell(db));
  ASSERT_EQ(report.code, 0) << report.err;
  EXPECT_TRUE(contains(report.out, "by method")) << report.out;
  EXPECT_TRUE(contains(report.out, "agent:fake")) << report.out;
  EXPECT_TRUE(contains(report.out, "no_code")) << report.out;
}

}  // namespace
