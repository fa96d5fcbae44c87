// The LLM client against the loopback server: both protocols, retries (429 with Retry-After, 5xx,
// a reply cut short, a reply slower than the timeout, an unreachable server), malformed replies,
// the concurrency limit, the response cache, replay, and the log's redaction of secrets.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "llm/llm_client.h"
#include "llm/retry_policy.h"
#include "llm_test_util.h"
#include "loopback_llm_server.h"
#include "run_ekb.h"
#include "test_paths.h"

namespace {

using namespace ekb::llm;
using ekb::testing_llm::LoopbackLlmServer;
using ekb::testing_llm::Reply;

class LlmClientTest : public ::testing::Test {
 protected:
  void SetUp() override {
    scratch_ = ekb::testing::private_temp_path("llm_client");
    std::filesystem::remove_all(scratch_);
    options_.cache_root = scratch_ + "/cache";
    options_.log_path = scratch_ + "/log.jsonl";
    options_.cache_mode = CacheMode::Off;
  }
  void TearDown() override { std::filesystem::remove_all(scratch_); }

  ModelProfile openai() const { return ekb::testing_llm::fast_profile("openai", ApiKind::OpenAI, server_.openai_endpoint()); }
  ModelProfile anthropic() const {
    return ekb::testing_llm::fast_profile("anthropic", ApiKind::Anthropic, server_.anthropic_endpoint());
  }
  static ChatRequest request(std::string user = "write a kernel") { return {"be fast", std::move(user), 0.5, 256, 3}; }

  LoopbackLlmServer server_;
  ClientOptions options_;
  std::string scratch_;
};

TEST_F(LlmClientTest, OpenAiChatCompletions) {
  server_.set_sequence({Reply::answer("the answer", 1200, 300)});
  ModelProfile p = openai();
  p.usd_per_million_input_tokens = 2.0;
  p.usd_per_million_output_tokens = 10.0;
  LlmClient client(p, options_);
  CallOutcome out = client.complete(request(), 3);
  ASSERT_TRUE(out.ok) << out.error;
  EXPECT_EQ(out.reply.text, "the answer");
  EXPECT_EQ(out.reply.finish_reason, "stop");
  EXPECT_EQ(out.input_tokens, 1200);
  EXPECT_EQ(out.output_tokens, 300);
  EXPECT_DOUBLE_EQ(out.cost_usd, (1200 * 2.0 + 300 * 10.0) / 1e6);
  EXPECT_EQ(out.llm_calls, 1);
  EXPECT_FALSE(out.cached);
  EXPECT_GT(out.latency_s, 0);
  auto got = server_.received();
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].path, "/v1/chat/completions");
  EXPECT_EQ(got[0].body["model"], "test-model");
  EXPECT_EQ(got[0].body["messages"][0]["role"], "system");
  EXPECT_EQ(got[0].body["messages"][1]["content"], "write a kernel");
  EXPECT_EQ(got[0].body["temperature"], 0.5);
  EXPECT_EQ(got[0].body["max_tokens"], 256);
  EXPECT_EQ(got[0].body["seed"], 3);
  EXPECT_EQ(got[0].headers.count("authorization"), 0u);  // a profile without api_key_env sends no key
}

TEST_F(LlmClientTest, AnthropicMessagesWithItsKey) {
  server_.set_sequence({Reply::answer("bonjour", 40, 7)});
  ModelProfile p = anthropic();
  p.api_key_env = "EKB_TEST_ANTHROPIC_KEY";
  setenv("EKB_TEST_ANTHROPIC_KEY", "sk-ant-test-key", 1);
  LlmClient client(p, options_);
  CallOutcome out = client.complete(request(), 0);
  unsetenv("EKB_TEST_ANTHROPIC_KEY");
  ASSERT_TRUE(out.ok) << out.error;
  EXPECT_EQ(out.reply.text, "bonjour");
  EXPECT_EQ(out.reply.finish_reason, "end_turn");
  EXPECT_EQ(out.input_tokens, 40);
  EXPECT_EQ(out.output_tokens, 7);
  auto got = server_.received();
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].path, "/v1/messages");
  EXPECT_EQ(got[0].headers["x-api-key"], "sk-ant-test-key");
  EXPECT_EQ(got[0].headers["anthropic-version"], "2023-06-01");
  EXPECT_EQ(got[0].body["system"], "be fast");
  EXPECT_EQ(got[0].body["messages"].size(), 1u);
  EXPECT_EQ(got[0].body["max_tokens"], 256);
}

TEST_F(LlmClientTest, AMissingKeyNamesTheVariableToSet) {
  ModelProfile p = openai();
  p.api_key_env = "EKB_TEST_UNSET_KEY_VARIABLE";
  unsetenv("EKB_TEST_UNSET_KEY_VARIABLE");
  try {
    LlmClient client(p, options_);
    FAIL() << "no error without the key";
  } catch (const MissingApiKey& e) {
    EXPECT_NE(std::string(e.what()).find("set the environment variable EKB_TEST_UNSET_KEY_VARIABLE"), std::string::npos)
        << e.what();
  }
  options_.cache_mode = CacheMode::Replay;  // replaying contacts no server: no key needed
  EXPECT_NO_THROW(LlmClient(p, options_));
}

TEST_F(LlmClientTest, RateLimitHonoursRetryAfter) {
  server_.set_sequence({Reply::rate_limited("1"), Reply::answer("after the wait")});
  ModelProfile p = openai();  // backoff of milliseconds: only Retry-After makes it wait a second
  p.backoff_max_s = 5;        // (which is capped at backoff_max_s)
  LlmClient client(p, options_);
  auto start = std::chrono::steady_clock::now();
  CallOutcome out = client.complete(request(), 0);
  double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_TRUE(out.ok) << out.error;
  EXPECT_EQ(out.reply.text, "after the wait");
  EXPECT_EQ(out.llm_calls, 2);
  EXPECT_GE(waited, 0.95);
  EXPECT_GE(out.wall_s, 0.95);
}

TEST_F(LlmClientTest, ServerErrorsAreRetriedThenRecorded) {
  server_.set_sequence({Reply::error(500, "boom"), Reply::error(503, "busy"), Reply::answer("third time")});
  LlmClient client(openai(), options_);
  CallOutcome out = client.complete(request(), 0);
  ASSERT_TRUE(out.ok) << out.error;
  EXPECT_EQ(out.llm_calls, 3);

  server_.set_sequence({Reply::error(500, "always broken")});
  CallOutcome failed = client.complete(request(), 1);
  EXPECT_FALSE(failed.ok);
  EXPECT_EQ(failed.llm_calls, 4);  // max_retries = 3
  EXPECT_EQ(failed.error, "HTTP 500: server_error: always broken (4 attempts)");

  server_.set_sequence({Reply::error(400, "bad request")});  // a client error is not retried
  CallOutcome bad = client.complete(request(), 2);
  EXPECT_FALSE(bad.ok);
  EXPECT_EQ(bad.llm_calls, 1);
  EXPECT_EQ(bad.error, "HTTP 400: server_error: bad request (1 attempt)");
}

TEST_F(LlmClientTest, MalformedJsonIsAFailureNotRetried) {
  server_.set_sequence({Reply::malformed()});
  LlmClient client(anthropic(), options_);
  CallOutcome out = client.complete(request(), 0);
  EXPECT_FALSE(out.ok);
  EXPECT_EQ(out.llm_calls, 1);
  EXPECT_EQ(out.error.rfind("malformed reply: the reply is not a JSON object", 0), 0u) << out.error;
}

TEST_F(LlmClientTest, AReplyCutShortIsRetried) {
  server_.set_sequence({Reply::cut_short("half of this is lost"), Reply::answer("whole")});
  LlmClient client(openai(), options_);
  CallOutcome out = client.complete(request(), 0);
  ASSERT_TRUE(out.ok) << out.error;
  EXPECT_EQ(out.reply.text, "whole");
  EXPECT_EQ(out.llm_calls, 2);

  server_.set_sequence({Reply::cut_short("never whole")});
  CallOutcome failed = client.complete(request(), 1);
  EXPECT_FALSE(failed.ok);
  EXPECT_EQ(failed.llm_calls, 4);
  EXPECT_EQ(failed.error.rfind("unreachable: ", 0), 0u) << failed.error;
}

TEST_F(LlmClientTest, AReplySlowerThanTheTimeoutIsRetried) {
  ModelProfile p = openai();
  p.timeout_s = 0.2;
  p.max_retries = 1;
  server_.set_sequence({Reply::slow(0.6, "too late"), Reply::answer("in time")});
  LlmClient client(p, options_);
  CallOutcome out = client.complete(request(), 0);
  ASSERT_TRUE(out.ok) << out.error;
  EXPECT_EQ(out.reply.text, "in time");
  EXPECT_EQ(out.llm_calls, 2);

  server_.set_sequence({Reply::slow(0.6, "always too late")});
  CallOutcome failed = client.complete(request(), 1);
  EXPECT_FALSE(failed.ok);
  EXPECT_EQ(failed.llm_calls, 2);
  EXPECT_EQ(failed.error.rfind("timed out: ", 0), 0u) << failed.error;
  EXPECT_LT(failed.wall_s, 1.0);  // the client gave up at its timeout, not when the server answered
}

TEST_F(LlmClientTest, AnUnreachableServerIsRetriedThenRecorded) {
  ModelProfile p = openai();
  p.endpoint = "http://127.0.0.1:" + std::to_string(ekb::testing_llm::closed_port()) + "/v1";
  LlmClient client(p, options_);
  CallOutcome out = client.complete(request(), 0);
  EXPECT_FALSE(out.ok);
  EXPECT_EQ(out.llm_calls, 4);
  EXPECT_EQ(out.error.rfind("unreachable: Couldn't connect to server", 0), 0u) << out.error;
}

TEST_F(LlmClientTest, NoMoreRequestsInFlightThanTheProfileAllows) {
  ModelProfile p = openai();
  p.concurrency = 2;
  server_.set_sequence({Reply::slow(0.1, "ok")});
  LlmClient client(p, options_);
  std::vector<std::thread> threads;
  for (int i = 0; i < 6; ++i) threads.emplace_back([&, i] { EXPECT_TRUE(client.complete(request(), i).ok); });
  for (auto& t : threads) t.join();
  EXPECT_EQ(server_.request_count(), 6);
  EXPECT_EQ(server_.peak_in_flight(), 2);
  EXPECT_EQ(client.peak_concurrency(), 2);
}

TEST_F(LlmClientTest, TheCacheAnswersARepeatedRequestWithoutACall) {
  options_.cache_mode = CacheMode::ReadWrite;
  server_.set_sequence({Reply::answer("first", 11, 22), Reply::answer("second", 33, 44)});
  ModelProfile p = openai();
  p.usd_per_million_output_tokens = 1e6;  // $1 per output token: the cached figures are the original's
  LlmClient client(p, options_);
  CallOutcome a = client.complete(request(), 0);
  CallOutcome again = client.complete(request(), 0);
  ASSERT_TRUE(a.ok && again.ok);
  EXPECT_EQ(server_.request_count(), 1);
  EXPECT_FALSE(a.cached);
  EXPECT_TRUE(again.cached);
  EXPECT_EQ(again.reply.text, "first");
  EXPECT_EQ(again.input_tokens, 11);
  EXPECT_EQ(again.output_tokens, 22);
  EXPECT_DOUBLE_EQ(again.cost_usd, 22.0);
  EXPECT_EQ(again.llm_calls, 1);

  // Another sample index, prompt or temperature is another request.
  EXPECT_EQ(client.complete(request(), 1).reply.text, "second");
  client.complete(request("another prompt"), 0);
  ChatRequest hotter = request();
  hotter.temperature = 1.0;
  client.complete(hotter, 0);
  EXPECT_EQ(server_.request_count(), 4);

  // A new client (a later run) finds the stored answers too; failures are never stored.
  LlmClient later(p, options_);
  EXPECT_TRUE(later.complete(request(), 0).cached);
  server_.set_sequence({Reply::error(400, "no")});
  EXPECT_FALSE(later.complete(request("fails"), 0).ok);
  EXPECT_FALSE(later.complete(request("fails"), 0).ok);
  EXPECT_EQ(server_.request_count(), 6);
}

TEST_F(LlmClientTest, ReplayAnswersFromTheCacheAndFailsLoudlyOnAMiss) {
  options_.cache_mode = CacheMode::ReadWrite;
  server_.set_sequence({Reply::answer("recorded")});
  LlmClient(openai(), options_).complete(request(), 0);

  options_.cache_mode = CacheMode::Replay;
  LlmClient replay(openai(), options_);  // the server stays silent from here on
  CallOutcome out = replay.complete(request(), 0);
  EXPECT_TRUE(out.ok);
  EXPECT_TRUE(out.cached);
  EXPECT_EQ(out.reply.text, "recorded");
  EXPECT_EQ(server_.request_count(), 1);
  try {
    replay.complete(request(), 1);
    FAIL() << "replay answered a request it never recorded";
  } catch (const ReplayMiss& e) {
    EXPECT_NE(std::string(e.what()).find("replay: no stored answer for profile 'openai' (model test-model), sample 1"),
              std::string::npos)
        << e.what();
  }
  EXPECT_EQ(server_.request_count(), 1);
}

TEST_F(LlmClientTest, TheLogHasEveryExchangeAndNoSecret) {
  const std::string key = "sk-test-Secret-0123456789";
  ModelProfile p = openai();
  p.api_key_env = "EKB_TEST_OPENAI_KEY";
  setenv("EKB_TEST_OPENAI_KEY", key.c_str(), 1);
  // A server that echoes the key in its error, as some gateways do.
  server_.set_sequence({Reply::error(500, "upstream rejected key " + key), Reply::answer("fine")});
  LlmClient client(p, options_);
  CallOutcome ok = client.complete(request(), 0);
  server_.set_sequence({Reply::error(401, "invalid api key " + key)});
  CallOutcome failed = client.complete(request(), 1);
  unsetenv("EKB_TEST_OPENAI_KEY");
  ASSERT_TRUE(ok.ok);
  ASSERT_FALSE(failed.ok);
  EXPECT_EQ(failed.error.find(key), std::string::npos) << failed.error;
  EXPECT_NE(failed.error.find("[REDACTED]"), std::string::npos) << failed.error;
  EXPECT_EQ(server_.received()[0].headers["authorization"], "Bearer " + key);  // it was sent

  std::string log = ekb::testing_cli::slurp(options_.log_path);
  EXPECT_EQ(log.find(key), std::string::npos);
  EXPECT_EQ(log.find("Secret"), std::string::npos);
  std::vector<nlohmann::json> lines;
  std::istringstream in(log);
  for (std::string line; std::getline(in, line);) lines.push_back(nlohmann::json::parse(line));
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[0]["outcome"], "retry");
  EXPECT_EQ(lines[0]["response"]["status"], 500);
  EXPECT_TRUE(lines[0].contains("retry_in_s"));
  EXPECT_EQ(lines[0]["request"]["headers"]["Authorization"], "[REDACTED]");
  EXPECT_EQ(lines[0]["request"]["body"]["messages"][1]["content"], "write a kernel");
  EXPECT_EQ(lines[1]["outcome"], "ok");
  EXPECT_EQ(lines[1]["response"]["body"]["choices"][0]["message"]["content"], "fine");
  EXPECT_EQ(lines[2]["outcome"], "failed");
  EXPECT_EQ(lines[2]["sample"], 1);
}

TEST(RetryPolicy, ReadsRetryAfterInItsForms) {
  HttpResponse r;
  EXPECT_FALSE(retry_after_s(r));
  r.headers["retry-after"] = "7";
  EXPECT_EQ(retry_after_s(r), 7.0);
  r.headers["retry-after-ms"] = "250";
  EXPECT_EQ(retry_after_s(r), 0.25);
  r.headers.erase("retry-after-ms");
  char date[64];
  std::time_t in_a_minute = std::time(nullptr) + 60;
  std::strftime(date, sizeof date, "%a, %d %b %Y %H:%M:%S GMT", std::gmtime(&in_a_minute));
  r.headers["retry-after"] = date;
  ASSERT_TRUE(retry_after_s(r));
  EXPECT_NEAR(*retry_after_s(r), 60, 2);
  r.headers["retry-after"] = "soon";
  EXPECT_FALSE(retry_after_s(r));
}

TEST(RetryPolicy, BacksOffExponentiallyWithJitterWithinItsCap) {
  RetryPolicy policy{5, 1.0, 8.0};
  std::mt19937_64 rng(42);
  HttpResponse r;
  for (int retry = 0; retry < 6; ++retry) {
    double cap = std::min(8.0, std::ldexp(1.0, retry));
    double max_seen = 0;
    for (int i = 0; i < 200; ++i) {
      double d = policy.delay_s(retry, r, rng);
      EXPECT_GE(d, 0);
      EXPECT_LE(d, cap);
      max_seen = std::max(max_seen, d);
    }
    EXPECT_GT(max_seen, cap * 0.8) << "no spread at retry " << retry;  // jitter covers the range
  }
  r.headers["retry-after"] = "3";
  EXPECT_EQ(policy.delay_s(0, r, rng), 3.0);  // the server's word over the schedule
  r.headers["retry-after"] = "3600";
  EXPECT_EQ(policy.delay_s(0, r, rng), 8.0);  // capped
  auto with_status = [](int status) {
    HttpResponse response;
    response.status = status;
    return response;
  };
  EXPECT_TRUE(RetryPolicy::retryable(with_status(429)));
  EXPECT_TRUE(RetryPolicy::retryable(with_status(529)));
  EXPECT_FALSE(RetryPolicy::retryable(with_status(401)));
  HttpResponse refused = with_status(0);
  refused.transport_error = "Couldn't connect to server";
  EXPECT_TRUE(RetryPolicy::retryable(refused));
}

}  // namespace
