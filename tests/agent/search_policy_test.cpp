// The search policy (agent/search_policy.h, agent/sketches.h): its sketch per pattern class, the
// same proposals for the same seed and outcomes, and — through the loop — every candidate it keeps
// correct under the full protocol.
#include "agent/search_policy.h"

#include <gtest/gtest.h>

#include <cctype>
#include <filesystem>
#include <set>

#include "agent/agent_loop.h"
#include "agent/workload_analysis.h"
#include "eval/candidate_evaluation.h"
#include "agent/agent_test_util.h"
#include "eval/eval_test_util.h"
#include "test_paths.h"

namespace ekb::agent {
namespace {

namespace fs = std::filesystem;

WorkloadAnalysis analysis_of(const std::string& workload) {
  static suite::Suite suite = suite::Suite::load();
  const suite::WorkloadEntry w = *suite.find_workload(workload);
  const ir::Instance inst = suite::bind_workload(w);
  return analyse_workload(w, inst, ir::Target::Cpu, std::nullopt);
}

TEST(Sketches, EachPatternClassIsReadFromTheComputeLayer) {
  EXPECT_EQ(classify(analysis_of("linalg.gemm/mini").stages), PatternClass::Contraction);
  EXPECT_EQ(classify(analysis_of("nn.softmax/kws_1x12").stages), PatternClass::Reduction);
  EXPECT_EQ(classify(analysis_of("nn.relu6/mbv2_035_96_48x48x48").stages), PatternClass::Elementwise);
  EXPECT_EQ(classify(analysis_of("img.gaussian3x3/vww_96x96_u8").stages), PatternClass::Stencil);
}

TEST(Sketches, TheContractionSketchTilesWithARegisterTileAndCachesItInTheMemoryLayer) {
  Sketch sketch(analysis_of("linalg.gemm/small"));
  GeneValues v = sketch.initial();
  const std::string schedule = sketch.schedule(v);
  EXPECT_NE(schedule.find("split(C, i, 4, i_o, i_i)"), std::string::npos) << schedule;
  EXPECT_NE(schedule.find("vectorize(C, j_i, 16)"), std::string::npos) << schedule;
  EXPECT_NE(schedule.find("parallel(C, i_o)"), std::string::npos) << schedule;
  v["cache_tile"] = 1;
  const std::string memory = sketch.memory(v);
  EXPECT_NE(memory.find("cache_write(C, "), std::string::npos) << memory;
}

// Feeds a policy states whose outcomes are a fixed function of the step, as the loop would.
std::vector<std::string> actions_with_outcomes(uint64_t seed, const WorkloadAnalysis& analysis, int steps) {
  SearchPolicy policy(seed);
  AgentState state;
  state.analysis = &analysis;
  Step start;
  start.outcome = "kept";
  state.history.push_back(start);
  std::vector<std::string> actions;
  for (int i = 1; i <= steps; ++i) {
    Proposal p = policy.propose(state);
    if (p.stop) break;
    actions.push_back(std::string(layer_name(p.layer)) + ": " + p.action + "\n" + p.text);
    Step s;
    s.index = i;
    s.layer = p.layer;
    s.action = p.action;
    s.outcome = i % 3 == 1 ? "kept" : "slower";
    state.history.push_back(s);
    state.layer = i > 4 ? Layer::Memory : Layer::Schedule;
  }
  return actions;
}

TEST(SearchPolicy, TheSameSeedAndOutcomesGiveTheSameProposals) {
  const WorkloadAnalysis a = analysis_of("linalg.gemm/small");
  const auto first = actions_with_outcomes(7, a, 12);
  ASSERT_GE(first.size(), 6u);
  EXPECT_EQ(first, actions_with_outcomes(7, a, 12));
  EXPECT_NE(first, actions_with_outcomes(8, a, 12));
  // No proposal repeats one already tried.
  std::set<std::string> distinct(first.begin(), first.end());
  EXPECT_EQ(distinct.size(), first.size());
}

class SearchKeepsOnlyCorrectCandidates : public ::testing::TestWithParam<const char*> {};

TEST_P(SearchKeepsOnlyCorrectCandidates, UnderTheFullProtocol) {
  static suite::Suite suite = suite::Suite::load();
  const suite::WorkloadEntry w = *suite.find_workload(GetParam());
  const std::string out = ekb::testing::private_temp_path("search_policy");
  fs::remove_all(out);
  // Every correct candidate kept, so that there are some to check.
  AgentOptions options = ekb::testing::agent_test_options(out, 4);
  options.final_eval.time = false;
  SearchPolicy policy(1);
  AgentRun r = run_agent(policy, ekb::testing::test_backend(), w, options);
  EXPECT_TRUE(r.final.correct) << r.final.message;
  EXPECT_GT(r.steps.size(), 1u);

  const ir::Instance inst = suite::bind_workload(w);
  eval::WorkloadReference reference(inst);
  const eval::Baseline baseline = eval::make_baseline(inst, ir::Target::Cpu);
  eval::EvalOptions full = ekb::testing::fast_options();
  full.time = false;
  int kept = 0;
  for (const auto& s : r.steps) {
    if (s.index == 0 || s.outcome != "kept") continue;
    ++kept;
    eval::CandidateRef c;
    c.workload = w;
    c.path = (fs::path(out) / w.pattern->name() / (w.workload->name + ".steps") / (std::to_string(s.index) + ".ekb")).string();
    c.solution = c.path;
    const eval::CandidateResult result = eval::evaluate_candidate(ekb::testing::test_backend(), reference, baseline, c, full);
    EXPECT_TRUE(result.correct) << "step " << s.index << " (" << s.action << "): " << result.message;
  }
  EXPECT_GT(kept, 0) << "the search kept nothing on " << GetParam();
  fs::remove_all(out);
}

INSTANTIATE_TEST_SUITE_P(PatternClasses, SearchKeepsOnlyCorrectCandidates,
                         ::testing::Values("linalg.gemm/mini", "nn.softmax/kws_1x12", "nn.relu6/mbv2_035_96_48x48x48",
                                           "img.gaussian3x3/vww_96x96_u8"),
                         [](const auto& info) {
                           std::string n = info.param;
                           for (char& c : n)
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           return n;
                         });

}  // namespace
}  // namespace ekb::agent
