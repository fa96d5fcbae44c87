// `ekb experiment` end to end against the loopback server: direct generation, both LEKA policies
// and a scripted external agent on one workload at one budget, each judged by `ekb eval`, then the
// comparison table; a second run resumes everything and asks the model nothing.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>

#include "llm/loopback_llm_server.h"
#include "run_ekb.h"
#include "test_paths.h"

namespace {

namespace fs = std::filesystem;
using ekb::testing_cli::run_ekb;
using ekb::testing_cli::slurp;
using ekb::testing_llm::LoopbackLlmServer;
using ekb::testing_llm::Received;
using ekb::testing_llm::Reply;

constexpr const char* kWorkload = "nn.softmax/kws_1x12";  // 12 floats: instant to check and time

std::string shell(const fs::path& p) { return "'" + p.string() + "'"; }
bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// The line of the comparison table that starts with `method` (the children's own reports, passed
// through before it, have rows named alike).
std::string table_row(const std::string& out, const std::string& method) {
  const size_t table = out.rfind("\nexperiment ");
  if (table == std::string::npos) return "";
  const std::string tail = out.substr(table);
  std::smatch m;
  if (std::regex_search(tail, m, std::regex("\n  " + method + " +[^\n]*"))) return m.str();
  return "";
}

TEST(Experiment, EveryMethodAtOneBudgetJudgedByEvalThenResumedWithoutAskingAgain) {
  const fs::path dir = ekb::testing::private_temp_path("experiment");
  fs::remove_all(dir);
  fs::create_directories(dir);
  auto emitted = run_ekb(std::string("emit ") + kWorkload);
  ASSERT_EQ(emitted.code, 0) << emitted.err;
  const std::string correct = emitted.out;
  const std::string wrong = std::regex_replace(correct, std::regex("expf\\("), "exp2f(");
  ASSERT_NE(wrong, correct);

  // Direct generation's prompts get the native C, once wrong (2^x for e^x) and once right; LEKA's
  // get STOP (its step 0, the default lowering, is then its answer).
  LoopbackLlmServer server;
  int direct_requests = 0;
  server.set_script([&](const Received& r) {
    if (contains(r.body.dump(), "reply with the single word STOP")) return Reply::answer("STOP");
    return Reply::answer("```c\n" + (direct_requests++ == 0 ? wrong : correct) + "```\n");
  });
  const fs::path models = dir / "models.toml";
  std::ofstream(models) << "[profiles.loop]\napi = \"openai\"\nendpoint = \"" << server.openai_endpoint()
                        << "\"\nmodel = \"test-model\"\nconcurrency = 1\nmax_retries = 0\ntimeout_s = 5\n";
  const fs::path agent = dir / "scripted_agent.sh";
  std::ofstream(agent) << "#!/bin/sh\ncat > \"$EKB_SOLUTION_FILE\" <<'EOF'\n" << correct << "EOF\n./check >&2\n";

  const std::string command = "experiment --methods direct,leka:search,leka:llm,agent:scripted --model loop --models " +
                              shell(models) + " --cache-dir " + shell(dir / "cache") + " --agent-command 'sh " +
                              agent.string() + "' --budget evaluations=2,wall=300 --min-time 0.02 -o " +
                              shell(dir / "exp") + " " + kWorkload;
  auto first = run_ekb(command);
  ASSERT_EQ(first.code, 0) << first.out << first.err;
  const size_t asked = server.received().size();
  EXPECT_EQ(direct_requests, 2) << "direct spends its budget of 2 evaluations as 2 samples";
  EXPECT_GE(asked, 3u);

  // Each method's solutions and its evaluation, side by side in the experiment's directory.
  for (const char* d : {"direct", "leka-search", "leka-llm", "agent-scripted"}) {
    EXPECT_TRUE(fs::exists(dir / "exp" / d / "nn.softmax" / "kws_1x12.s0.meta.json")) << d;
    EXPECT_TRUE(fs::exists(dir / "exp" / (std::string(d) + ".results.json"))) << d;
  }
  EXPECT_TRUE(fs::exists(dir / "exp/direct/nn.softmax/kws_1x12.s1.meta.json"));
  const auto direct = nlohmann::json::parse(slurp((dir / "exp/direct.results.json").string()));
  ASSERT_EQ(direct["results"].size(), 2u) << direct.dump();
  EXPECT_NE(direct["results"][0]["correct"], direct["results"][1]["correct"]) << "one sample wrong, one right";

  // The table: every method correct on the workload (direct by its better sample), the ledger per
  // workload beside it.
  for (const char* m : {"direct", "leka:search", "leka:llm", "agent:scripted"}) {
    const std::string row = table_row(first.out, m);
    ASSERT_FALSE(row.empty()) << m << " has no row:\n" << first.out;
    EXPECT_TRUE(std::regex_search(row, std::regex(R"(^\s+\S+\s+1\s+100\.0%)"))) << row;
  }
  EXPECT_TRUE(std::regex_search(table_row(first.out, "direct"), std::regex(R"(\|\s+2\.0\s)")))
      << "direct's two model calls: " << table_row(first.out, "direct");
  EXPECT_TRUE(contains(first.out, "FAST@1.0 by domain and level")) << first.out;
  EXPECT_TRUE(contains(first.out, "domain nn")) << first.out;

  // Again: nothing is generated, searched or evaluated anew, and the table is the same.
  auto second = run_ekb(command);
  ASSERT_EQ(second.code, 0) << second.out << second.err;
  EXPECT_EQ(server.received().size(), asked) << "the model was asked again";
  EXPECT_TRUE(contains(second.err, "leka:search: every workload has its solution")) << second.err;
  EXPECT_TRUE(contains(second.err, "evaluated already")) << second.err;
  for (const char* m : {"direct", "leka:search", "leka:llm", "agent:scripted"}) {
    EXPECT_EQ(table_row(first.out, m), table_row(second.out, m)) << m;
  }
  fs::remove_all(dir);
}

TEST(Experiment, RefusesWhatItCannotCompareFairly) {
  const fs::path dir = ekb::testing::private_temp_path("experiment_usage");
  auto no_model = run_ekb("experiment --methods direct --budget evaluations=2 -o " + shell(dir) + " " + kWorkload);
  EXPECT_EQ(no_model.code, 2);
  EXPECT_TRUE(contains(no_model.err, "need a model profile")) << no_model.err;
  auto no_evaluations = run_ekb("experiment --methods direct --model m --budget wall=60 -o " + shell(dir) + " " + kWorkload);
  EXPECT_EQ(no_evaluations.code, 2);
  EXPECT_TRUE(contains(no_evaluations.err, "evaluations=N")) << no_evaluations.err;
  auto unknown = run_ekb("experiment --methods leka:magic -o " + shell(dir) + " " + kWorkload);
  EXPECT_EQ(unknown.code, 2);
  EXPECT_TRUE(contains(unknown.err, "unknown method 'leka:magic'")) << unknown.err;
  fs::remove_all(dir);
}

}  // namespace
