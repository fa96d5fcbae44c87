// The llm policy against the loopback model server: a reply read as one layer's text, the
// feedback of earlier steps in the next prompt, unusable replies and failing servers charged and
// never thrown, replay from the response cache, STOP, and a scripted three-step conversation.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "agent/layer_text.h"
#include "agent/llm_policy.h"
#include "agent/llm_prompt.h"
#include "agent/llm_reply.h"
#include "llm/llm_test_util.h"
#include "llm/loopback_llm_server.h"
#include "test_paths.h"

namespace {

using namespace ekb::agent;
using ekb::testing_llm::LoopbackLlmServer;
using ekb::testing_llm::Reply;

constexpr const char* kProgram = R"(pattern linalg.matmul {
  level operator
  types T
  params M, N, K
  input  A : T[M, K] in [-1, 1]
  input  B : T[K, N] in [-1, 1]
  output C : T[M, N]

  C[i, j] = sum(k in 0..K: A[i, k] * B[k, j])
}

schedule cpu {
  parallel(C, i)  # rows on threads
}
)";

std::string fenced(const std::string& language, const std::string& body) { return "```" + language + "\n" + body + "```\n"; }

// A step as the loop records it (timing filled in by the caller where there is one).
Step step(int index, Layer layer, std::string action, std::string outcome, std::string message = "") {
  Step s;
  s.index = index;
  s.layer = layer;
  s.action = std::move(action);
  s.outcome = std::move(outcome);
  s.message = std::move(message);
  return s;
}

// A server that accepts connections (the kernel's backlog does) and never answers.
class SilentServer {
 public:
  SilentServer() {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof addr;
    ::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
    ::listen(fd_, 16);
    ::getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
  }
  ~SilentServer() { ::close(fd_); }
  std::string openai_endpoint() const { return "http://127.0.0.1:" + std::to_string(port_) + "/v1"; }

 private:
  int fd_ = -1;
  int port_ = 0;
};

class LlmPolicyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    scratch_ = ekb::testing::private_temp_path("llm_policy");
    std::filesystem::remove_all(scratch_);
    analysis_.workload = "linalg.matmul/tiny_8x8x8";
    analysis_.backend = "cpu";
    analysis_.task_statement = "Write ekb_main computing C = A * B for 8x8 matrices of f32.";
    analysis_.flops = 1024;
    analysis_.bytes = 768;
    analysis_.arithmetic_intensity = 1024.0 / 768;
    analysis_.baseline_ms = 0.0123;
    analysis_.baseline = "native";
    analysis_.roofline_ms = 0.001;
    analysis_.default_loop_ir = "for i in 0..8:\n  for j in 0..8:\n    C[i, j] = ...\n";
  }
  void TearDown() override { std::filesystem::remove_all(scratch_); }

  AgentState state() const {
    AgentState s;
    s.analysis = &analysis_;
    s.program = kProgram;
    s.layer = Layer::Schedule;
    s.legal_directives = {"split(stage, loop, factor, outer, inner[, tail=guard])", "vectorize(stage, loop, factor)"};
    s.history.push_back(step(0, Layer::Compute, "default lowering", "kept"));
    return s;
  }
  ekb::llm::ModelProfile profile() const {
    return ekb::testing_llm::fast_profile("test", ekb::llm::ApiKind::OpenAI, server_.openai_endpoint());
  }
  ekb::llm::ClientOptions client(ekb::llm::CacheMode mode = ekb::llm::CacheMode::Off) const {
    return {mode, scratch_ + "/cache", scratch_ + "/requests.jsonl"};
  }
  // The user message of the n-th request the server received.
  std::string prompt(size_t n) const {
    auto got = server_.received();
    if (n >= got.size()) return "";
    for (const auto& m : got[n].body["messages"])
      if (m["role"] == "user") return m["content"];
    return "";
  }

  LoopbackLlmServer server_;
  WorkloadAnalysis analysis_;
  std::string scratch_;
};

TEST_F(LlmPolicyTest, AGoodReplyBecomesAProposalOfItsLayer) {
  server_.set_sequence({Reply::answer("Vectorize the inner loop.\n" +
                                          fenced("ekb", "schedule cpu {\n  parallel(C, i)\n  vectorize(C, j, 8)\n}\n"),
                                      1200, 80)});
  LlmPolicy policy(profile(), client(), 0.0);
  Proposal p = policy.propose(state());
  EXPECT_FALSE(p.stop);
  EXPECT_EQ(p.layer, Layer::Schedule);
  EXPECT_EQ(p.text, "schedule cpu {\n  parallel(C, i)\n  vectorize(C, j, 8)\n}\n");
  EXPECT_EQ(p.action, "schedule: +vectorize(C, j, 8)");
  EXPECT_EQ(p.rationale, "Vectorize the inner loop.");
  EXPECT_EQ(p.cost.llm_calls, 1);
  EXPECT_EQ(p.cost.input_tokens, 1200);
  EXPECT_EQ(p.cost.output_tokens, 80);
  EXPECT_GE(p.cost.wall_s, 0);
  EXPECT_EQ(p.cost.evaluations, 0);  // the loop's to charge
  EXPECT_EQ(policy.name(), "llm");
  EXPECT_EQ(policy.model(), "test-model");
}

TEST_F(LlmPolicyTest, TheLayerIsReadFromTheBlocksHeaderOrItsFence) {
  const AgentState s = state();
  Proposal memory = parse_llm_reply(fenced("ekb", "memory cpu {\n  nontemporal(C)\n}\n"), s);
  EXPECT_EQ(memory.layer, Layer::Memory);
  EXPECT_EQ(memory.action, "memory: +nontemporal(C)");

  // A schedule block after the memory block schedules its caches' buffers: still the memory layer.
  Proposal cached = parse_llm_reply(
      fenced("ekb", "memory cpu {\n  cache_read(A, C, k, tile, As)\n}\nschedule cpu {\n  vectorize(As, c1, 8)\n}\n"), s);
  EXPECT_EQ(cached.layer, Layer::Memory);
  EXPECT_EQ(cached.action, "memory: +cache_read(A, C, k, tile, As); +vectorize(As, c1, 8)");

  Proposal fewer = parse_llm_reply(fenced("", "schedule cpu {\n}\n"), s);  // untagged, by its header
  EXPECT_EQ(fewer.layer, Layer::Schedule);
  EXPECT_EQ(fewer.action, "schedule: -parallel(C, i)");

  Proposal compute = parse_llm_reply(fenced("ekb", "pattern linalg.matmul {\n  level operator\n}\n"), s);
  EXPECT_EQ(compute.layer, Layer::Compute);
  EXPECT_EQ(compute.action, "rewrite compute");

  const std::string c = "#include <stddef.h>\nvoid ekb_main(void) {\n}\n";
  Proposal source = parse_llm_reply("A hand-written kernel.\n" + fenced("c", c), s);
  EXPECT_EQ(source.layer, Layer::Source);
  EXPECT_EQ(source.text, c);
  EXPECT_EQ(source.action, "new source");
}

TEST_F(LlmPolicyTest, ABlockOfTheWrongLanguageOrOfTwoLayersIsUnusable) {
  const AgentState s = state();
  Proposal cuda = parse_llm_reply(fenced("cuda", "__global__ void k() {}\n"), s);  // the backend is cpu
  EXPECT_TRUE(cuda.text.empty());
  EXPECT_NE(cuda.rationale.find("only: cuda"), std::string::npos) << cuda.rationale;

  Proposal two_layers = parse_llm_reply(fenced("ekb", "schedule cpu {\n  parallel(C, i)\n}\nmemory cpu {\n}\n"), s);
  EXPECT_TRUE(two_layers.text.empty());
  EXPECT_NE(two_layers.rationale.find("one layer per reply"), std::string::npos) << two_layers.rationale;

  Proposal two_blocks =
      parse_llm_reply(fenced("ekb", "schedule cpu {\n}\n") + "and\n" + fenced("ekb", "memory cpu {\n}\n"), s);
  EXPECT_TRUE(two_blocks.text.empty());
  EXPECT_NE(two_blocks.rationale.find("2 fenced blocks"), std::string::npos) << two_blocks.rationale;

  Proposal ekb_prose = parse_llm_reply(fenced("ekb", "vectorize(C, j, 8)\n"), s);
  EXPECT_TRUE(ekb_prose.text.empty());
  EXPECT_NE(ekb_prose.rationale.find("must start with pattern, schedule or memory"), std::string::npos);

  Proposal cut = parse_llm_reply("```ekb\nschedule cpu {\n  parallel(C, i)\n", s);
  EXPECT_TRUE(cut.text.empty());
  EXPECT_NE(cut.rationale.find("cut short"), std::string::npos);
}

TEST_F(LlmPolicyTest, TheNextPromptCarriesTheLastStepsDiagnostics) {
  server_.set_sequence({Reply::answer("STOP")});
  LlmPolicy policy(profile(), client(), 0.0);
  AgentState s = state();
  s.history.push_back(step(1, Layer::Schedule, "schedule: +vectorize(C, q, 8)", "verify",
                           "/tmp//run/linalg.matmul/tiny.steps/1.ekb:14:3: error: vectorize(C, q, 8): C has no loop 'q' (loops: i, j, k)"));
  policy.propose(s);
  s.history.push_back(step(2, Layer::Schedule, "schedule: +split(C, k, 4, ko, ki)", "correctness",
                           "C[3, 5] = 1.5, expected 1.25 (first); C[7, 7] = 9, expected 2 (worst)"));
  policy.propose(s);
  ASSERT_EQ(server_.request_count(), 2);
  const std::string first = prompt(0), second = prompt(1);
  EXPECT_NE(first.find("14:3: error: vectorize(C, q, 8): C has no loop 'q'"), std::string::npos) << first;
  EXPECT_NE(first.find("\n1.ekb:14:3: error"), std::string::npos) << first;  // the loop's directory left out
  EXPECT_NE(first.find("step 1 [schedule] schedule: +vectorize(C, q, 8): verify"), std::string::npos) << first;
  EXPECT_NE(second.find("C[3, 5] = 1.5, expected 1.25 (first); C[7, 7] = 9, expected 2 (worst)"), std::string::npos);
  for (const std::string& p : {first, second}) {
    EXPECT_NE(p.find("- split(stage, loop, factor, outer, inner[, tail=guard])"), std::string::npos);
    EXPECT_NE(p.find("- vectorize(stage, loop, factor)"), std::string::npos);
    EXPECT_NE(p.find("Work on the schedule layer"), std::string::npos);
    EXPECT_NE(p.find(analysis_.task_statement), std::string::npos);
    EXPECT_NE(p.find("parallel(C, i)  # rows on threads"), std::string::npos);  // the program, verbatim
    EXPECT_NE(p.find("roofline bound: 0.001 ms"), std::string::npos);
  }
}

TEST_F(LlmPolicyTest, ThePromptIsAPureFunctionOfTheState) {
  AgentState s = state();
  EXPECT_EQ(llm_prompt(s), llm_prompt(s));
  const std::string before = llm_prompt(s);
  Step slower = step(1, Layer::Schedule, "schedule: no change", "slower");
  slower.ms = 0.0131;
  slower.speedup = 0.94;
  slower.roofline_fraction = 0.0763;
  s.history.push_back(slower);
  const std::string after = llm_prompt(s);
  EXPECT_NE(before, after);
  EXPECT_NE(after.find("step 1 [schedule] schedule: no change: slower, 0.0131 ms, 0.94x the baseline, 7.63% of the "
                       "roofline bound"),
            std::string::npos)
      << after;
}

TEST_F(LlmPolicyTest, ALongLoopIrIsShortened) {
  std::string ir;
  for (int i = 0; i < 300; ++i) ir += "line " + std::to_string(i) + "\n";
  analysis_.default_loop_ir = ir;
  const std::string p = llm_prompt(state());
  EXPECT_NE(p.find("line 0\n"), std::string::npos);
  EXPECT_NE(p.find("line 299\n"), std::string::npos);
  EXPECT_EQ(p.find("line 150\n"), std::string::npos);
  EXPECT_NE(p.find("(220 lines left out)"), std::string::npos);
}

TEST_F(LlmPolicyTest, GibberishAndProseAreUnusableAndCharged) {
  server_.set_sequence({Reply::answer("qwxz ptlk }}{{ ###", 300, 12), Reply::answer("I would vectorize j by 8.", 300, 9),
                        Reply::answer("", 300, 0)});
  LlmPolicy policy(profile(), client(), 0.0);
  for (const char* why : {"no fenced block", "no fenced block", "the reply is empty"}) {
    Proposal p = policy.propose(state());
    EXPECT_TRUE(p.text.empty());
    EXPECT_FALSE(p.stop);
    EXPECT_NE(p.rationale.find(why), std::string::npos) << p.rationale;
    EXPECT_EQ(p.cost.llm_calls, 1);
    EXPECT_EQ(p.cost.input_tokens, 300);
  }
}

TEST_F(LlmPolicyTest, AServerErrorIsUnusableWithItsAttemptsCharged) {
  server_.set_sequence({Reply::error(500, "model crashed")});
  LlmPolicy policy(profile(), client(), 0.0);
  Proposal p;
  EXPECT_NO_THROW(p = policy.propose(state()));
  EXPECT_TRUE(p.text.empty());
  EXPECT_FALSE(p.stop);
  EXPECT_NE(p.rationale.find("HTTP 500"), std::string::npos) << p.rationale;
  EXPECT_NE(p.rationale.find("model crashed"), std::string::npos) << p.rationale;
  EXPECT_EQ(p.cost.llm_calls, 4);  // max_retries = 3
}

TEST_F(LlmPolicyTest, AServerThatNeverAnswersIsUnusableAfterItsTimeout) {
  SilentServer silent;
  ekb::llm::ModelProfile p = ekb::testing_llm::fast_profile("silent", ekb::llm::ApiKind::OpenAI, silent.openai_endpoint());
  p.timeout_s = 0.05;
  p.max_retries = 1;
  LlmPolicy policy(p, client(), 0.0);
  Proposal out;
  EXPECT_NO_THROW(out = policy.propose(state()));
  EXPECT_TRUE(out.text.empty());
  EXPECT_NE(out.rationale.find("the model's server failed"), std::string::npos) << out.rationale;
  EXPECT_EQ(out.cost.llm_calls, 2);
  EXPECT_GT(out.cost.wall_s, 0);
}

TEST_F(LlmPolicyTest, StopEndsTheWorkload) {
  server_.set_sequence({Reply::answer("Nothing left: the kernel is at the roofline.\nSTOP")});
  LlmPolicy policy(profile(), client(), 0.0);
  Proposal p = policy.propose(state());
  EXPECT_TRUE(p.stop);
  EXPECT_EQ(p.rationale, "Nothing left: the kernel is at the roofline.");
  EXPECT_EQ(p.cost.llm_calls, 1);
}

TEST_F(LlmPolicyTest, ReplayGivesTheSameProposalsDespiteTimingNoiseAndRethrowsAMiss) {
  server_.set_sequence({Reply::answer(fenced("ekb", "schedule cpu {\n  parallel(C, i)\n  vectorize(C, j, 8)\n}\n")),
                        Reply::answer("STOP")});
  AgentState s = state();
  AgentState later = state();
  Step kept = step(1, Layer::Schedule, "schedule: +vectorize(C, j, 8)", "kept");
  kept.ms = 0.006;
  kept.speedup = 2.05;
  later.history.push_back(kept);
  std::vector<Proposal> recorded;
  {
    LlmPolicy policy(profile(), client(ekb::llm::CacheMode::ReadWrite), 0.0);
    recorded = {policy.propose(s), policy.propose(later)};
  }
  ASSERT_EQ(server_.request_count(), 2);
  LlmPolicy replay(profile(), client(ekb::llm::CacheMode::Replay), 0.0);
  std::vector<Proposal> replayed = {replay.propose(s), replay.propose(later)};
  EXPECT_EQ(server_.request_count(), 2);  // nothing asked
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(replayed[i].text, recorded[i].text);
    EXPECT_EQ(replayed[i].action, recorded[i].action);
    EXPECT_EQ(replayed[i].stop, recorded[i].stop);
    EXPECT_EQ(replayed[i].cost.input_tokens, recorded[i].cost.input_tokens);  // the original call's figures
  }
  EXPECT_TRUE(replayed[1].stop);

  // The same outcomes with other timings (noise between two runs): the same recorded answer.
  AgentState noisy = later;
  noisy.history.back().ms = 0.0063;
  noisy.history.back().speedup = 1.96;
  noisy.history.back().message = "1.96x, above the best 1.00x";
  analysis_.baseline_ms = 0.0125;
  EXPECT_NE(llm_prompt(noisy), llm_prompt(later));
  EXPECT_TRUE(replay.propose(noisy).stop);
  EXPECT_EQ(server_.request_count(), 2);

  AgentState unseen = later;  // another outcome is another question
  unseen.history.back().outcome = "slower";
  try {
    replay.propose(unseen);
    FAIL() << "a replay miss was not reported";
  } catch (const ekb::llm::ReplayMiss& e) {
    EXPECT_NE(std::string(e.what()).find("step 2 (schedule layer): replay: no stored answer"), std::string::npos)
        << e.what();
  }
  EXPECT_EQ(server_.request_count(), 2);
}

TEST_F(LlmPolicyTest, TheFactoryReadsTheProfileFromTheModelsFile) {
  std::filesystem::create_directories(scratch_);
  const std::string models = scratch_ + "/models.toml";
  std::ofstream(models) << "[profiles.local]\napi = \"openai\"\nendpoint = \"" << server_.openai_endpoint()
                        << "\"\nmodel = \"tiny\"\ntemperature = 0.7\nmax_retries = 0\n";
  server_.set_sequence({Reply::answer("STOP")});
  LlmPolicyOptions o;
  o.profile = "local";
  o.models_path = models;
  o.cache_mode = ekb::llm::CacheMode::Off;
  o.cache_dir = scratch_ + "/cache";
  o.log_path = scratch_ + "/requests.jsonl";
  o.temperature = 0.2;
  std::unique_ptr<Policy> policy = make_llm_policy(o);
  EXPECT_EQ(policy->model(), "tiny");
  EXPECT_TRUE(policy->propose(state()).stop);
  ASSERT_EQ(server_.request_count(), 1);
  EXPECT_EQ(server_.received()[0].body["temperature"], 0.2);
  EXPECT_TRUE(std::filesystem::exists(o.log_path));

  o.profile = "absent";
  EXPECT_THROW(make_llm_policy(o), ekb::llm::ConfigError);
}

// The loop's part played by hand for three steps: a proposal that fails to verify, its fix (kept)
// and STOP, each reply chosen by what the prompt says, so the test shows the feedback arriving.
TEST_F(LlmPolicyTest, AScriptedConversationEvolvesWithTheFeedback) {
  const std::string diagnostic = "<agent>:14:3: error: vectorize(C, q, 8): C has no loop 'q' (loops: i, j, k)";
  server_.set_script([&](const ekb::testing_llm::Received& r) {
    const std::string p = r.body["messages"].back()["content"];
    if (p.find("kept, 0.00615 ms, 2x the baseline") != std::string::npos) return Reply::answer("STOP");
    if (p.find(diagnostic) != std::string::npos)
      return Reply::answer("The loop is j.\n" +
                           fenced("ekb", "schedule cpu {\n  parallel(C, i)  # rows on threads\n  vectorize(C, j, 8)\n}\n"));
    return Reply::answer(fenced("ekb", "schedule cpu {\n  parallel(C, i)  # rows on threads\n  vectorize(C, q, 8)\n}\n"));
  });
  LlmPolicy policy(profile(), client(), 0.0);
  AgentState s = state();
  std::vector<Proposal> proposals;
  for (int index = 1; index <= 4; ++index) {
    Proposal p = policy.propose(s);
    proposals.push_back(p);
    if (p.stop) break;
    Step done = step(index, p.layer, p.action, "");
    if (p.text.find("(C, q, 8)") != std::string::npos) {
      done.outcome = "verify";
      done.message = diagnostic;
    } else {
      done.outcome = "kept";
      done.ms = 0.00615;
      done.speedup = 2.0;
      // The loop splices the kept layer into the program.
      const size_t at = s.program.find("schedule cpu {");
      s.program = s.program.substr(0, at) + p.text;
      s.best_speedup = 2.0;
      s.layer = Layer::Memory;
    }
    s.history.push_back(done);
  }
  ASSERT_EQ(proposals.size(), 3u);
  EXPECT_EQ(proposals[0].action, "schedule: +vectorize(C, q, 8)");
  EXPECT_EQ(proposals[1].action, "schedule: +vectorize(C, j, 8)");
  EXPECT_EQ(proposals[1].rationale, "The loop is j.");
  EXPECT_TRUE(proposals[2].stop);
  EXPECT_NE(prompt(2).find("Work on the memory layer"), std::string::npos);
  EXPECT_NE(prompt(2).find("best so far: 2x the baseline"), std::string::npos);
  EXPECT_NE(prompt(2).find("  vectorize(C, j, 8)\n}"), std::string::npos);  // the new best program
}

TEST(LayerText, BlocksAreFoundPastNestedBracesStringsAndComments) {
  const std::string text =
      "# a file\npattern x.y {\n  source \"a } brace\"\n  C[i] = A[i]  # } not one\n}\nworkload w { N = 4 }\n"
      "schedule gpu {\n  bind(C, i, block.x)\n}\nmemory {\n}\n";
  std::vector<TextBlock> b = top_level_blocks(text);
  ASSERT_EQ(b.size(), 4u);
  EXPECT_EQ(b[0].keyword, "pattern");
  EXPECT_TRUE(b[0].closed);
  EXPECT_EQ(b[1].keyword, "workload");
  EXPECT_EQ(b[2].keyword, "schedule");
  EXPECT_EQ(b[2].target, "gpu");
  EXPECT_EQ(b[3].keyword, "memory");
  EXPECT_EQ(b[3].target, "");
  EXPECT_EQ(directive_lines(b[2].text), std::vector<std::string>{"bind(C, i, block.x)"});
  EXPECT_EQ(directive_change({"a(1)", "b(2)"}, {"b(2)", "a(1)"}), "reorder directives");
  EXPECT_EQ(directive_change({"a(1)"}, {"a(1)"}), "no change");
  EXPECT_EQ(directive_change({}, {"a(1)", "a(2)", "a(3)", "a(4)", "a(5)", "a(6)"}),
            "+a(1); +a(2); +a(3); +a(4) (+2 more)");
}

}  // namespace
