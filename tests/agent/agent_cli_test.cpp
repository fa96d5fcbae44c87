// `ekb agent --policy llm` end to end against the loopback server: the model's illegal schedule is
// answered with its diagnostic in the next prompt, a good one is kept, STOP ends the workload; the
// solution, its metadata and the trajectory are written; `--replay` walks the same path without
// the server.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <fstream>
#include <regex>
#include <sstream>

#include "llm/loopback_llm_server.h"
#include "run_ekb.h"
#include "test_paths.h"

namespace {

namespace fs = std::filesystem;
using ekb::testing_cli::run_ekb;
using ekb::testing_cli::slurp;
using ekb::testing_llm::LoopbackLlmServer;
using ekb::testing_llm::Reply;

constexpr const char* kWorkload = "linalg.gemm/mini";

std::string shell(const fs::path& p) { return "'" + p.string() + "'"; }

std::vector<nlohmann::json> trajectory_rows(const fs::path& p) {
  std::vector<nlohmann::json> rows;
  std::istringstream in(slurp(p.string()));
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) rows.push_back(nlohmann::json::parse(line));
  return rows;
}

// The steps' actions and outcomes, in order.
std::vector<std::string> step_path(const std::vector<nlohmann::json>& rows) {
  std::vector<std::string> path;
  for (const auto& r : rows)
    if (r.value("record", "") == "step") path.push_back(r.value("action", "") + " -> " + r.value("outcome", ""));
  return path;
}

TEST(AgentCli, TheLlmPolicyLearnsFromTheDiagnosticKeepsAGoodScheduleAndReplays) {
  LoopbackLlmServer server;
  const fs::path dir = ekb::testing::private_temp_path("agent_cli_llm");
  fs::remove_all(dir);
  fs::create_directories(dir);
  const fs::path models = dir / "models.toml";
  std::ofstream(models) << "[profiles.loop]\napi = \"openai\"\nendpoint = \"" << server.openai_endpoint()
                        << "\"\nmodel = \"test-model\"\nmax_retries = 0\ntimeout_s = 5\n";
  server.set_sequence({
      Reply::answer("Split a loop that does not exist:\n```\nschedule cpu {\n  split(C, q, 4, qo, qi)\n}\n```\n"),
      Reply::answer("Then this:\n```\nschedule cpu {\n  vectorize(C, j, 4)\n}\n```\n"),
      Reply::answer("STOP"),
  });
  const std::string common = "agent --policy llm --model loop --models " + shell(models) + " --cache-dir " +
                             shell(dir / "cache") + " --budget evaluations=6 --step-time 0.05 ";
  auto first = run_ekb(common + "-o " + shell(dir / "a") + " " + kWorkload);
  ASSERT_EQ(first.code, 0) << first.out << first.err;
  const auto received = server.received();
  ASSERT_EQ(received.size(), 3u);
  // The second request carries the first one's diagnostic, with its line and column.
  const std::string second_prompt = received[1].body.dump();
  EXPECT_NE(second_prompt.find("has no loop 'q'"), std::string::npos) << second_prompt;
  EXPECT_TRUE(std::regex_search(second_prompt, std::regex(R"(1\.ekb:\d+:\d+: error)")))
      << "no line:col of the illegal split: " << second_prompt;

  const auto rows = trajectory_rows(dir / "a/linalg.gemm/mini.trajectory.jsonl");
  const auto path = step_path(rows);
  ASSERT_GE(path.size(), 3u) << nlohmann::json(path).dump();
  EXPECT_NE(path[1].find("-> verify"), std::string::npos) << path[1];
  EXPECT_NE(path[2].find("vectorize"), std::string::npos) << path[2];
  EXPECT_EQ(path[2].find("-> verify"), std::string::npos) << path[2];

  const nlohmann::json meta = nlohmann::json::parse(slurp((dir / "a/linalg.gemm/mini.s0.meta.json").string()));
  EXPECT_EQ(meta.value("method", ""), "leka:llm");
  EXPECT_EQ(meta.value("model", ""), "test-model");
  EXPECT_EQ(meta["ledger"].value("llm_calls", 0), 3);

  // What it wrote is a solution like any other method's.
  auto judged = run_ekb("eval --no-timing -s " + shell(dir / "a") + " --db " + shell(dir / "r.db") + " --json " +
                        shell(dir / "r.json") + " " + kWorkload);
  ASSERT_EQ(judged.code, 0) << judged.err;
  const nlohmann::json results = nlohmann::json::parse(slurp((dir / "r.json").string()));
  ASSERT_EQ(results["results"].size(), 1u);
  EXPECT_TRUE(results["results"][0].value("correct", false)) << results["results"][0].dump();
  // Its report points at the trajectory (the metadata's transcript).
  EXPECT_EQ(meta.value("transcript", ""), "mini.trajectory.jsonl");
  auto report = run_ekb("report last --db " + shell(dir / "r.db"));
  ASSERT_EQ(report.code, 0) << report.err;
  EXPECT_NE(report.out.find(dir.filename().string() + "/a/linalg.gemm/mini.trajectory.jsonl"), std::string::npos)
      << report.out;

  // Replay: the same path from the cache, the server not asked again.
  auto replay = run_ekb(common + "--replay -o " + shell(dir / "b") + " " + kWorkload);
  ASSERT_EQ(replay.code, 0) << replay.out << replay.err;
  EXPECT_EQ(server.request_count(), 3);
  EXPECT_EQ(step_path(trajectory_rows(dir / "b/linalg.gemm/mini.trajectory.jsonl")), path);
  fs::remove_all(dir);
}

TEST(AgentCli, TheLlmPolicyWithoutAProfileOrWithAnUnknownOneIsAUsageError) {
  const fs::path dir = ekb::testing::private_temp_path("agent_cli_usage");
  auto none = run_ekb("agent --policy llm -o " + shell(dir / "a") + " " + kWorkload);
  EXPECT_EQ(none.code, 2) << none.err;
  EXPECT_NE(none.err.find("--model PROFILE"), std::string::npos) << none.err;
  fs::create_directories(dir);
  std::ofstream(dir / "models.toml") << "[profiles.other]\napi = \"openai\"\nendpoint = \"http://127.0.0.1:9/v1\"\nmodel = \"m\"\n";
  auto unknown = run_ekb("agent --policy llm --model loop --models " + shell(dir / "models.toml") + " -o " +
                         shell(dir / "a") + " " + kWorkload);
  EXPECT_EQ(unknown.code, 2) << unknown.err;
  EXPECT_NE(unknown.err.find("other"), std::string::npos) << "the file's profiles are listed: " << unknown.err;
  fs::remove_all(dir);
}

}  // namespace

namespace {

// `ekb agent --shard I/N`: the shards of one selection optimize disjoint sets of its workloads,
// which together are the whole selection (each a trajectory and a solution of its own).
TEST(AgentCli, ShardsOptimizeDisjointPartsThatTogetherAreTheWholeSelection) {
  const fs::path dir = ekb::testing::private_temp_path("agent_cli_shards");
  fs::remove_all(dir);
  const std::vector<std::string> workloads = {"linalg.gemm/mini", "nn.softmax/kws_1x12", "nn.relu6/mbv2_035_96_48x48x48",
                                              "img.gaussian3x3/vww_96x96_u8", "audio.fir/kws_320x64"};
  std::string selection;
  for (const auto& w : workloads) selection += " " + w;
  std::map<std::string, int> owners;  // workload -> how many shards wrote its trajectory
  for (int shard = 0; shard < 2; ++shard) {
    const fs::path out = dir / ("shard" + std::to_string(shard));
    auto r = run_ekb("agent --policy search --budget evaluations=2 --step-time 0.05 --shard " + std::to_string(shard) +
                     "/2 -o " + shell(out) + selection);
    ASSERT_EQ(r.code, 0) << r.out << r.err;
    for (const auto& w : workloads)
      if (fs::exists(out / (w + ".trajectory.jsonl"))) {
        ++owners[w];
        EXPECT_TRUE(fs::exists(out / (w + ".ekb"))) << w;
      }
  }
  for (const auto& w : workloads) EXPECT_EQ(owners[w], 1) << w << ": optimized by " << owners[w] << " shards";
  fs::remove_all(dir);
}

}  // namespace
