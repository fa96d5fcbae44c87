// LEKA's loop (agent/agent_loop.h) driven by a scripted policy: what it keeps, how it records a
// directive the verifier rejects and a compute rewrite that computes something else, where the
// budget stops it, and that what it writes is a solution `ekb eval` judges correct. Nothing here
// depends on speed: the tests that keep a candidate keep every correct one (min_gain -1).
#include "agent/agent_loop.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <functional>
#include <regex>

#include "agent/trajectory.h"
#include "agent/agent_test_util.h"
#include "eval/solution_meta.h"
#include "eval/solution_set.h"
#include "run_ekb.h"
#include "test_paths.h"

namespace ekb::agent {
namespace {

namespace fs = std::filesystem;

constexpr const char* kWorkload = "linalg.gemm/mini";
constexpr const char* kGoodSchedule = "schedule cpu {\n  parallel(C, i)\n  vectorize(C, j, 4)\n}\n";

// Answers each state with the next function of a script; stops when the script ends.
class ScriptedPolicy : public Policy {
 public:
  using Script = std::vector<std::function<Proposal(const AgentState&)>>;
  explicit ScriptedPolicy(Script script) : script_(std::move(script)) {}
  std::string name() const override { return "scripted"; }
  Proposal propose(const AgentState& state) override {
    states.push_back(state);
    if (next_ >= script_.size()) {
      Proposal stop;
      stop.stop = true;
      return stop;
    }
    return script_[next_++](state);
  }
  std::vector<AgentState> states;  // every state it was asked with, in order

 private:
  Script script_;
  size_t next_ = 0;
};

Proposal proposal(Layer layer, std::string text, std::string action) {
  Proposal p;
  p.layer = layer;
  p.text = std::move(text);
  p.action = std::move(action);
  return p;
}

class AgentLoop : public ::testing::Test {
 protected:
  void SetUp() override {
    out_ = ekb::testing::private_temp_path("agent_loop");
    fs::remove_all(out_);
    options_ = ekb::testing::agent_test_options(out_, 10);
  }
  void TearDown() override { fs::remove_all(out_); }
  AgentRun run(Policy& policy, const char* workload = kWorkload) {
    return run_agent(policy, ekb::testing::test_backend(), *suite_.find_workload(workload), options_);
  }

  std::string out_;
  AgentOptions options_;
  suite::Suite suite_ = suite::Suite::load();
};

TEST_F(AgentLoop, StepZeroIsTheDefaultLoweringAndMeasuresTheBaseline) {
  ScriptedPolicy policy({});
  AgentRun r = run(policy);
  ASSERT_EQ(r.steps.size(), 1u);
  EXPECT_EQ(r.steps[0].index, 0);
  EXPECT_EQ(r.steps[0].outcome, "kept") << r.steps[0].message;
  EXPECT_GT(r.analysis.baseline_ms, 0);
  EXPECT_GT(r.analysis.flops, 0);
  EXPECT_FALSE(r.analysis.default_loop_ir.empty());
  ASSERT_EQ(r.analysis.stages.size(), 1u);
  EXPECT_EQ(r.analysis.stages[0].name, "C");
  EXPECT_EQ(r.analysis.stages[0].loops.size(), 3u);  // i, j and the reduction k
  EXPECT_TRUE(r.analysis.stages[0].loops[2].reduction);
  ASSERT_EQ(policy.states.size(), 1u);
  EXPECT_EQ(policy.states[0].layer, Layer::Compute);
}

TEST_F(AgentLoop, ACorrectScheduleIsKeptAndBecomesTheProgramAndTheSolution) {
  ScriptedPolicy policy({[](const AgentState&) { return proposal(Layer::Schedule, kGoodSchedule, "parallel + vectorize"); }});
  AgentRun r = run(policy);
  ASSERT_EQ(r.steps.size(), 2u);
  EXPECT_EQ(r.steps[1].outcome, "kept") << r.steps[1].message;
  EXPECT_TRUE(r.steps[1].ms.has_value());
  EXPECT_TRUE(r.steps[1].speedup.has_value());
  EXPECT_NE(r.steps[1].diff.find("+  vectorize(C, j, 4)"), std::string::npos) << r.steps[1].diff;
  ASSERT_EQ(policy.states.size(), 2u);
  EXPECT_NE(policy.states[1].program.find("vectorize(C, j, 4)"), std::string::npos);
  EXPECT_EQ(r.final.best_step, 1);
  EXPECT_TRUE(r.final.correct) << r.final.message;
  EXPECT_NE(ekb::testing_cli::slurp(r.final.solution).find("vectorize(C, j, 4)"), std::string::npos);
}

TEST_F(AgentLoop, AnIllegalDirectiveIsRecordedWithItsDiagnosticAndShownToThePolicy) {
  ScriptedPolicy policy({
      [](const AgentState&) { return proposal(Layer::Schedule, "schedule cpu {\n  split(C, q, 4, qo, qi)\n}\n", "split q"); },
      [](const AgentState&) { return proposal(Layer::Schedule, kGoodSchedule, "good"); },
  });
  AgentRun r = run(policy);
  ASSERT_GE(r.steps.size(), 2u);
  EXPECT_EQ(r.steps[1].outcome, "verify");
  EXPECT_TRUE(std::regex_search(r.steps[1].message, std::regex(R"(\.ekb:\d+:\d+: error)"))) << r.steps[1].message;
  EXPECT_FALSE(r.steps[1].ms.has_value());
  EXPECT_EQ(r.steps[1].cost.evaluations, 0);  // nothing ran
  ASSERT_GE(policy.states.size(), 2u);
  ASSERT_EQ(policy.states[1].history.size(), 2u);
  EXPECT_EQ(policy.states[1].history[1].outcome, "verify");
  EXPECT_EQ(policy.states[1].history[1].message, r.steps[1].message);
  EXPECT_EQ(policy.states[1].program.find("split(C, q"), std::string::npos);  // not kept
}

TEST_F(AgentLoop, AWrongComputeRewriteIsCaughtAtCorrectness) {
  ScriptedPolicy policy({[](const AgentState& s) {
    std::string compute = s.program;
    const size_t beta = compute.find("let beta = 1.2");
    EXPECT_NE(beta, std::string::npos) << compute;
    compute.replace(beta, 14, "let beta = 1.3");
    return proposal(Layer::Compute, compute, "beta 1.3");
  }});
  AgentRun r = run(policy);
  ASSERT_EQ(r.steps.size(), 2u);
  EXPECT_EQ(r.steps[1].layer, Layer::Compute);
  EXPECT_EQ(r.steps[1].outcome, "correctness");
  EXPECT_FALSE(r.steps[1].message.empty());
  EXPECT_EQ(r.final.best_step, 0);
}

TEST_F(AgentLoop, AnUnusableAnswerInTheScheduleLayerIsRecordedAndNeverEvaluated) {
  // An empty schedule text is a proposal ("no schedule block"); an unusable answer is not, in any layer.
  ScriptedPolicy policy({[](const AgentState&) {
    Proposal p = proposal(Layer::Schedule, "", "no proposal");
    p.unusable = true;
    p.rationale = "the reply has no fenced block and is not STOP";
    return p;
  }});
  AgentRun r = run(policy);
  ASSERT_EQ(r.steps.size(), 2u);
  EXPECT_EQ(r.steps[1].outcome, "unusable");
  EXPECT_EQ(r.steps[1].message, "the reply has no fenced block and is not STOP");
  EXPECT_FALSE(r.steps[1].ms.has_value());
  EXPECT_EQ(r.steps[1].cost.evaluations, 0);
  EXPECT_EQ(r.final.spent.evaluations, 2);  // step 0 and the final evaluation only
}

TEST_F(AgentLoop, TheBudgetStopsTheLoopAtItsEvaluations) {
  ScriptedPolicy::Script script(20, [](const AgentState&) { return proposal(Layer::Schedule, kGoodSchedule, "again"); });
  ScriptedPolicy policy(script);
  options_.budget.evaluations = 3;
  AgentRun r = run(policy);
  EXPECT_EQ(r.steps.size(), 3u);  // the default and two proposals
  EXPECT_EQ(r.final.spent.evaluations, 4);  // and the final full-protocol evaluation
  EXPECT_EQ(policy.states.size(), 2u);
  EXPECT_EQ(policy.states.back().budget.evaluations, 3);
}

TEST_F(AgentLoop, TheTrajectoryHasEveryStepAndTheSolutionEvaluatesCorrectWithEkbEval) {
  ScriptedPolicy policy({
      [](const AgentState&) { return proposal(Layer::Schedule, "schedule cpu {\n  fuse(C, q)\n}\n", "bad"); },
      [](const AgentState&) { return proposal(Layer::Schedule, kGoodSchedule, "good"); },
  });
  AgentRun r = run(policy);
  Trajectory t = read_trajectory(r.trajectory);
  ASSERT_TRUE(t.analysis.has_value());
  EXPECT_EQ(t.analysis->value("workload", ""), kWorkload);
  ASSERT_EQ(t.steps.size(), r.steps.size());
  for (size_t i = 0; i < t.steps.size(); ++i) {
    EXPECT_EQ(t.steps[i].outcome, r.steps[i].outcome);
    EXPECT_EQ(t.steps[i].action, r.steps[i].action);
  }
  ASSERT_TRUE(t.final.has_value());
  EXPECT_EQ(t.final->solution, r.final.solution);

  const eval::SolutionMeta meta =
      eval::read_solution_meta((fs::path(out_) / "linalg.gemm" / eval::meta_file_name("mini", 0)).string());
  EXPECT_EQ(meta.method, "leka:scripted");
  EXPECT_EQ(meta.ledger.evaluations, r.final.spent.evaluations);

  const std::string json = out_ + "/results.json";
  auto e = ekb::testing_cli::run_ekb("eval -s " + out_ + " " + kWorkload + " --no-timing --db " + out_ +
                                     "/results.db --json " + json);
  ASSERT_EQ(e.code, 0) << e.err << e.out;
  const nlohmann::json results = nlohmann::json::parse(ekb::testing_cli::slurp(json));
  ASSERT_EQ(results.at("results").size(), 1u) << results.dump(2);
  EXPECT_TRUE(results["results"][0].at("correct").get<bool>()) << results.dump(2);
  EXPECT_EQ(results["results"][0].at("solution"), "linalg.gemm/mini.ekb");

  auto shown = ekb::testing_cli::run_ekb("trajectory show " + r.trajectory + " --diff");
  ASSERT_EQ(shown.code, 0) << shown.err;
  EXPECT_NE(shown.out.find("verify"), std::string::npos) << shown.out;
  EXPECT_NE(shown.out.find("+  vectorize(C, j, 4)"), std::string::npos) << shown.out;
  EXPECT_NE(shown.out.find("final (full protocol, step 2): correct"), std::string::npos) << shown.out;
}

TEST_F(AgentLoop, AKeptSourceStepIsWrittenAsASourceSolution) {
  const std::string c = eval::native_baseline_source(suite::bind_workload(*suite_.find_workload(kWorkload))).text;
  ScriptedPolicy policy({[&](const AgentState&) { return proposal(Layer::Source, c, "the default's C"); }});
  AgentRun r = run(policy);
  ASSERT_EQ(r.steps.size(), 2u);
  EXPECT_EQ(r.steps[1].outcome, "kept") << r.steps[1].message;
  EXPECT_TRUE(r.final.correct) << r.final.message;
  EXPECT_EQ(fs::path(r.final.solution).filename(), "mini.c");
  EXPECT_FALSE(fs::exists(fs::path(out_) / "linalg.gemm" / "mini.ekb"));
}

TEST_F(AgentLoop, TheLegalDirectivesAreTheTableRowsOfTheSuggestedLayerForTheBackend) {
  ScriptedPolicy::Script script(3, [](const AgentState&) { return proposal(Layer::Schedule, "schedule cpu {\n  fuse(C, q)\n}\n", "bad"); });
  ScriptedPolicy policy(script);
  AgentRun r = run(policy);
  const AgentState& schedule_state = policy.states[1];
  ASSERT_EQ(schedule_state.layer, Layer::Schedule);
  auto has = [&](const std::string& prefix) {
    for (const auto& d : schedule_state.legal_directives)
      if (d.starts_with(prefix)) return true;
    return false;
  };
  EXPECT_TRUE(has("split(stage, loop, factor, outer, inner"));
  EXPECT_TRUE(has("parallel("));
  EXPECT_FALSE(has("bind("));        // gpu only
  EXPECT_FALSE(has("cache_read("));  // the memory layer's
}

}  // namespace
}  // namespace ekb::agent
