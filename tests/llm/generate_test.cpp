// `ekb generate` end to end against the loopback server, then `ekb eval` of what it wrote:
// solutions and records in the documented layout, resuming, failures recorded while the run goes
// on, the cache and replay, bad configuration, and Correct@k / Fast@p over the generated samples.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <set>

#include "llm/response_cache.h"
#include "loopback_llm_server.h"
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

bool contains(const std::string& s, const std::string& what) { return s.find(what) != std::string::npos; }
std::string shell(const fs::path& p) { return "'" + p.string() + "'"; }

nlohmann::json read_json(const fs::path& p) { return nlohmann::json::parse(slurp(p.string())); }

class GenerateTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = ekb::testing::private_temp_path("generate");
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    // The correct answer: the native compiler's own C for the workload. The wrong one computes
    // 2^x where softmax needs e^x.
    auto emitted = run_ekb(std::string("emit ") + kWorkload);
    ASSERT_EQ(emitted.code, 0) << emitted.err;
    correct_ = emitted.out;
    wrong_ = std::regex_replace(correct_, std::regex("expf\\("), "exp2f(");
    ASSERT_NE(wrong_, correct_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // A models file with profile `loop` (openai) and `loop-anthropic` on the loopback server,
  // retrying after milliseconds.
  std::string models(const std::string& extra = "") {
    std::string path = (dir_ / "models.toml").string();
    std::ofstream(path) << "[profiles.loop]\napi = \"openai\"\nendpoint = \"" << server_.openai_endpoint()
                        << "\"\nmodel = \"test-model\"\ntemperature = 0.8\nconcurrency = 2\nmax_retries = 1\n"
                           "backoff_initial_s = 0.001\nbackoff_max_s = 0.01\ntimeout_s = 5\n"
                           "usd_per_million_input_tokens = 1.0\nusd_per_million_output_tokens = 4.0\n"
                        << extra << "\n[profiles.loop-anthropic]\napi = \"anthropic\"\nendpoint = \""
                        << server_.anthropic_endpoint() << "\"\nmodel = \"claude-test\"\nmax_retries = 0\n";
    return path;
  }
  std::string generate(const std::string& args) {
    return "generate --models " + shell(models()) + " --cache-dir " + shell(dir_ / "cache") + " " + args;
  }

  // A reply in prose around the code, with the signature echoed in a block of its own first.
  static std::string chatty(const std::string& code) {
    return "Sure! The interface is:\n```c\nvoid ekb_main(const float* x, float* y, int64_t R, int64_t C);\n```\n"
           "Here is the whole kernel:\n\n```c\n" + code + "```\n\nIt computes a numerically stable softmax.";
  }

  LoopbackLlmServer server_;
  fs::path dir_;
  std::string correct_, wrong_;
};

TEST_F(GenerateTest, SamplesThenEvalGivesCorrectAtKAndFastAtP) {
  // Sample 0 and 2 correct, sample 1 wrong: the request's seed is the sample index.
  server_.set_script([this](const Received& r) {
    int seed = r.body.value("seed", -1);
    return Reply::answer(chatty(seed == 1 ? wrong_ : correct_), 1500, 400 + seed);
  });
  fs::path out = dir_ / "out";
  auto gen = run_ekb(generate(std::string("--model loop --backend cpu --samples 3 ") + kWorkload + " --out " + shell(out)));
  ASSERT_EQ(gen.code, 0) << gen.out << gen.err;
  EXPECT_TRUE(contains(gen.out, "generated 3 samples: 3 ok, 0 no_code, 0 failed")) << gen.out;
  EXPECT_EQ(server_.request_count(), 3);
  EXPECT_LE(server_.peak_in_flight(), 2);  // the profile's concurrency

  // The prompt is `ekb prompt`'s task statement, and the records carry its hash.
  auto prompt = run_ekb(std::string("prompt ") + kWorkload + " --backend cpu");
  ASSERT_EQ(prompt.code, 0);
  for (const auto& r : server_.received()) {
    EXPECT_EQ(r.body["messages"].back()["content"], prompt.out);
    EXPECT_EQ(r.body["temperature"], 0.8);  // the profile's
  }
  const fs::path pattern_dir = out / "nn.softmax";
  EXPECT_EQ(slurp((pattern_dir / "kws_1x12.s0.c").string()), correct_);
  EXPECT_EQ(slurp((pattern_dir / "kws_1x12.s1.c").string()), wrong_);
  nlohmann::json meta = read_json(pattern_dir / "kws_1x12.s1.meta.json");
  std::set<std::string> keys;
  for (const auto& [k, v] : meta.items()) keys.insert(k);
  EXPECT_EQ(keys, (std::set<std::string>{"method", "profile", "model", "endpoint_kind", "prompt_hash", "sample",
                                         "temperature", "status", "ledger", "latency_s", "cached"}));
  EXPECT_EQ(meta["method"], "direct");
  EXPECT_EQ(meta["profile"], "loop");
  EXPECT_EQ(meta["model"], "test-model");
  EXPECT_EQ(meta["endpoint_kind"], "openai");
  EXPECT_EQ(meta["prompt_hash"], ekb::llm::prompt_hash(prompt.out));
  EXPECT_EQ(meta["sample"], 1);
  EXPECT_EQ(meta["temperature"], 0.8);
  EXPECT_EQ(meta["status"], "ok");
  EXPECT_EQ(meta["cached"], false);
  EXPECT_GT(meta["latency_s"].get<double>(), 0);
  EXPECT_EQ(meta["ledger"]["llm_calls"], 1);
  EXPECT_EQ(meta["ledger"]["input_tokens"], 1500);
  EXPECT_EQ(meta["ledger"]["output_tokens"], 401);
  EXPECT_DOUBLE_EQ(meta["ledger"]["cost_usd"].get<double>(), (1500 * 1.0 + 401 * 4.0) / 1e6);
  EXPECT_EQ(meta["ledger"]["evaluations"], 0);
  EXPECT_TRUE(fs::exists(out / "llm-requests.jsonl"));

  // Resumed: every sample is there, nothing is asked again; more samples ask only for the new one.
  auto again = run_ekb(generate(std::string("--model loop --samples 3 ") + kWorkload + " --out " + shell(out)));
  ASSERT_EQ(again.code, 0) << again.err;
  EXPECT_TRUE(contains(again.err, "resuming with 3 done")) << again.err;
  EXPECT_EQ(server_.request_count(), 3);

  // The generated directory through the real harness.
  fs::path json = dir_ / "results.json";
  auto eval = run_ekb("eval --backend cpu --solutions " + shell(out) + " " + kWorkload + " --db " +
                      shell(dir_ / "results.db") + " --json " + shell(json) + " --min-time 0.01");
  ASSERT_EQ(eval.code, 0) << eval.out << eval.err;
  nlohmann::json doc = read_json(json);
  const auto& summary = doc["summary"];
  EXPECT_EQ(summary["n"], 3);
  EXPECT_EQ(summary["correct"], 2);
  EXPECT_NEAR(summary["correct_at_1"].get<double>(), 2.0 / 3, 1e-9);  // strictly between 0 and 1
  EXPECT_NEAR(summary["correct_at_k"]["1"].get<double>(), 2.0 / 3, 1e-9);
  EXPECT_NEAR(summary["fast_at"]["0.0"].get<double>(), 2.0 / 3, 1e-9);  // correct and timed
  EXPECT_TRUE(summary["fast_at"].contains("1.0"));
  EXPECT_EQ(summary["fast_at_best_of_n"]["0.0"], 1.0);  // the workload has a correct sample
  int mismatches = 0;
  for (const auto& r : doc["results"]) mismatches += r["error"] == "mismatch";
  EXPECT_EQ(mismatches, 1);
}

TEST_F(GenerateTest, FailedAndCodelessSamplesAreRecordedAndTheRunGoesOn) {
  // Sample 0 gets prose only, sample 1 a server that keeps failing, sample 2 code.
  server_.set_script([this](const Received& r) {
    int seed = r.body.value("seed", -1);
    if (seed == 0) return Reply::answer("I would use a two-pass algorithm: first the max, then the sum.");
    if (seed == 1) return Reply::error(503, "overloaded");
    return Reply::answer(chatty(correct_));
  });
  fs::path out = dir_ / "out";
  auto gen = run_ekb(generate(std::string("--model loop --samples 3 ") + kWorkload + " --out " + shell(out)));
  ASSERT_EQ(gen.code, 0) << gen.out << gen.err;
  EXPECT_TRUE(contains(gen.out, "generated 3 samples: 1 ok, 1 no_code, 1 failed")) << gen.out;
  const fs::path p = out / "nn.softmax";
  nlohmann::json no_code = read_json(p / "kws_1x12.s0.meta.json");
  EXPECT_EQ(no_code["status"], "no_code");
  EXPECT_EQ(no_code["error"], "the reply has no code block (```c)");
  EXPECT_EQ(no_code["ledger"]["llm_calls"], 1);
  nlohmann::json failed = read_json(p / "kws_1x12.s1.meta.json");
  EXPECT_EQ(failed["status"], "failed");
  EXPECT_EQ(failed["error"], "HTTP 503: server_error: overloaded (2 attempts)");
  EXPECT_EQ(failed["ledger"]["llm_calls"], 2);  // max_retries = 1
  EXPECT_FALSE(fs::exists(p / "kws_1x12.s0.c"));
  EXPECT_FALSE(fs::exists(p / "kws_1x12.s1.c"));
  EXPECT_TRUE(fs::exists(p / "kws_1x12.s2.c"));

  // Run again: the failed sample is tried again (and now succeeds); the others are kept.
  server_.set_script([this](const Received&) { return Reply::answer(chatty(correct_)); });
  int before = server_.request_count();
  auto again = run_ekb(generate(std::string("--model loop --samples 3 ") + kWorkload + " --out " + shell(out)));
  ASSERT_EQ(again.code, 0) << again.err;
  EXPECT_EQ(server_.request_count(), before + 1);
  EXPECT_EQ(read_json(p / "kws_1x12.s1.meta.json")["status"], "ok");
  EXPECT_TRUE(fs::exists(p / "kws_1x12.s1.c"));
  EXPECT_EQ(read_json(p / "kws_1x12.s0.meta.json")["status"], "no_code");
}

TEST_F(GenerateTest, AnUnreachableServerFailsEverySampleButFinishesTheRun) {
  std::string path = (dir_ / "down.toml").string();
  std::ofstream(path) << "[profiles.down]\napi = \"openai\"\nendpoint = \"http://127.0.0.1:"
                      << ekb::testing_llm::closed_port()
                      << "/v1\"\nmodel = \"m\"\nmax_retries = 2\nbackoff_initial_s = 0.001\nbackoff_max_s = 0.01\n";
  fs::path out = dir_ / "out";
  auto gen = run_ekb("generate --models " + shell(path) + " --model down --samples 2 --no-cache " + kWorkload +
                     " --out " + shell(out));
  EXPECT_EQ(gen.code, 1) << gen.out << gen.err;  // every sample failed
  EXPECT_TRUE(contains(gen.out, "generated 2 samples: 0 ok, 0 no_code, 2 failed")) << gen.out;
  for (int s = 0; s < 2; ++s) {
    nlohmann::json m = read_json(out / "nn.softmax" / ("kws_1x12.s" + std::to_string(s) + ".meta.json"));
    EXPECT_EQ(m["status"], "failed");
    EXPECT_TRUE(contains(m["error"].get<std::string>(), "unreachable: Couldn't connect to server")) << m.dump();
    EXPECT_EQ(m["ledger"]["llm_calls"], 3);
  }
}

// `ekb generate --shard I/N` splits by workload and sample: the shards write disjoint samples that
// together are every sample (here against a server that is down, so each is a failed record).
TEST_F(GenerateTest, ShardsWriteDisjointSamplesThatTogetherAreEverySample) {
  std::string path = (dir_ / "down.toml").string();
  std::ofstream(path) << "[profiles.down]\napi = \"openai\"\nendpoint = \"http://127.0.0.1:"
                      << ekb::testing_llm::closed_port() << "/v1\"\nmodel = \"m\"\nmax_retries = 0\n";
  constexpr int kSamples = 6;
  std::vector<int> writers(kSamples, 0);
  for (int shard = 0; shard < 2; ++shard) {
    fs::path out = dir_ / ("shard" + std::to_string(shard));
    auto gen = run_ekb("generate --models " + shell(path) + " --model down --samples " + std::to_string(kSamples) +
                       " --no-cache --shard " + std::to_string(shard) + "/2 " + kWorkload + " --out " + shell(out));
    EXPECT_NE(gen.code, 2) << gen.out << gen.err;  // not a usage error; every sample it owns failed
    for (int s = 0; s < kSamples; ++s)
      writers[s] += fs::exists(out / "nn.softmax" / ("kws_1x12.s" + std::to_string(s) + ".meta.json"));
  }
  for (int s = 0; s < kSamples; ++s) EXPECT_EQ(writers[s], 1) << "sample " << s;
}

TEST_F(GenerateTest, TheCacheAndReplay) {
  server_.set_script([this](const Received&) { return Reply::answer(chatty(correct_)); });
  auto first = run_ekb(generate(std::string("--model loop --samples 2 ") + kWorkload + " --out " + shell(dir_ / "a")));
  ASSERT_EQ(first.code, 0) << first.err;
  EXPECT_EQ(server_.request_count(), 2);

  // Another directory, same requests: answered from the cache, with the original ledger.
  auto replay = run_ekb(generate(std::string("--model loop --samples 2 --replay ") + kWorkload + " --out " +
                                 shell(dir_ / "b")));
  ASSERT_EQ(replay.code, 0) << replay.err;
  EXPECT_EQ(server_.request_count(), 2);
  nlohmann::json a = read_json(dir_ / "a/nn.softmax/kws_1x12.s1.meta.json");
  nlohmann::json b = read_json(dir_ / "b/nn.softmax/kws_1x12.s1.meta.json");
  EXPECT_EQ(b["cached"], true);
  EXPECT_EQ(b["ledger"], a["ledger"]);
  EXPECT_EQ(slurp((dir_ / "b/nn.softmax/kws_1x12.s1.c").string()), correct_);

  // A third sample was never recorded: replay stops with an error instead of asking.
  auto miss = run_ekb(generate(std::string("--model loop --samples 3 --replay ") + kWorkload + " --out " +
                               shell(dir_ / "c")));
  EXPECT_EQ(miss.code, 1);
  EXPECT_TRUE(contains(miss.err, "replay: no stored answer for profile 'loop' (model test-model), sample 2")) << miss.err;
  EXPECT_EQ(server_.request_count(), 2);
}

TEST_F(GenerateTest, AnthropicReplyWithBlocksForSeveralBackends) {
  const std::string cuda = "extern \"C\" void ekb_main(const float* x, float* y, int64_t R, int64_t C, cudaStream_t s) {}\n";
  server_.set_script([&](const Received&) {
    return Reply::answer("For CUDA:\n```cuda\n" + cuda + "```\nFor the CPU:\n```c\n" + correct_ + "```\n");
  });
  fs::path out = dir_ / "out";
  auto cpu = run_ekb(generate(std::string("--model loop-anthropic --temperature 0.2 ") + kWorkload + " --out " + shell(out)));
  ASSERT_EQ(cpu.code, 0) << cpu.err;
  EXPECT_EQ(slurp((out / "nn.softmax/kws_1x12.s0.c").string()), correct_);
  nlohmann::json meta = read_json(out / "nn.softmax/kws_1x12.s0.meta.json");
  EXPECT_EQ(meta["endpoint_kind"], "anthropic");
  EXPECT_EQ(meta["temperature"], 0.2);
  EXPECT_EQ(server_.received().at(0).path, "/v1/messages");

  auto gpu = run_ekb(generate(std::string("--model loop-anthropic --backend cuda ") + kWorkload + " --out " +
                              shell(dir_ / "cuda")));
  ASSERT_EQ(gpu.code, 0) << gpu.err;
  EXPECT_EQ(slurp((dir_ / "cuda/nn.softmax/kws_1x12.s0.cu").string()), cuda);

  // The cpu directory holds a cpu experiment: generating for cuda into it is refused.
  auto mixed = run_ekb(generate(std::string("--model loop-anthropic --backend cuda ") + kWorkload + " --out " + shell(out)));
  EXPECT_EQ(mixed.code, 2);
  EXPECT_TRUE(contains(mixed.err, "one --out directory holds one experiment")) << mixed.err;
}

TEST_F(GenerateTest, ConfigurationMistakes) {
  std::string models_path = models("api_key_env = \"EKB_TEST_GENERATE_KEY\"");
  unsetenv("EKB_TEST_GENERATE_KEY");  // ekb inherits the test's environment
  auto missing = run_ekb("generate --models " + shell(models_path) + " --model loop " + kWorkload + " --out " +
                         shell(dir_ / "o"));
  EXPECT_EQ(missing.code, 2);
  EXPECT_TRUE(contains(missing.err, "profile 'loop' needs an API key: set the environment variable EKB_TEST_GENERATE_KEY"))
      << missing.err;
  EXPECT_EQ(server_.request_count(), 0);

  std::string bad = (dir_ / "bad.toml").string();
  std::ofstream(bad) << "[profiles.x]\napi = \"openai\"\nendpoint = \"http://127.0.0.1:1/v1\"\nmodel = \"m\"\nconcurency = 2\n";
  auto typo = run_ekb("generate --models " + shell(bad) + " --model x " + kWorkload + " --out " + shell(dir_ / "o"));
  EXPECT_EQ(typo.code, 2);
  EXPECT_TRUE(contains(typo.err, bad + ":5:1: unknown key 'concurency' in profile 'x'")) << typo.err;

  auto unknown = run_ekb(generate("--model nope " + std::string(kWorkload) + " --out " + shell(dir_ / "o")));
  EXPECT_EQ(unknown.code, 2);
  EXPECT_TRUE(contains(unknown.err, "no profile 'nope'")) << unknown.err;
}

}  // namespace
