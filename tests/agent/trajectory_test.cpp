// Trajectory files (agent/trajectory.h), budgets (agent/budget.h) and the layered program's diff.
#include "agent/trajectory.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "agent/budget.h"
#include "agent/layered_program.h"
#include "test_paths.h"

namespace ekb::agent {
namespace {

TEST(Trajectory, StepsRoundTripAndATruncatedLastLineIsIgnored) {
  const std::string path = ekb::testing::private_temp_path("trajectory", ".jsonl");
  {
    TrajectoryWriter w(path);
    WorkloadAnalysis a;
    a.workload = "p.q/w";
    w.write(a);
    Step s;
    s.index = 1;
    s.layer = Layer::Memory;
    s.action = "nontemporal(y)";
    s.outcome = "verify";
    s.message = "x.ekb:3:4: error: no";
    s.ms = 1.5;
    s.cost.evaluations = 1;
    w.write(s);
  }
  std::ofstream(path, std::ios::app) << "{\"record\": \"step\", \"st";  // killed mid-line
  Trajectory t = read_trajectory(path);
  ASSERT_TRUE(t.analysis);
  ASSERT_EQ(t.steps.size(), 1u);
  EXPECT_EQ(t.steps[0].layer, Layer::Memory);
  EXPECT_EQ(t.steps[0].message, "x.ekb:3:4: error: no");
  EXPECT_EQ(t.steps[0].ms, 1.5);
  EXPECT_FALSE(t.steps[0].speedup);
  EXPECT_EQ(t.steps[0].cost.evaluations, 1);
  EXPECT_FALSE(t.final);
  std::filesystem::remove(path);
}

TEST(Budget, ParsesItsKeysAndRejectsOthers) {
  const eval::Ledger b = parse_budget("evaluations=16,wall=60.5,usd=2");
  EXPECT_EQ(b.evaluations, 16);
  EXPECT_EQ(b.wall_s, 60.5);
  EXPECT_EQ(b.cost_usd, 2);
  EXPECT_THROW(parse_budget("evals=3"), std::invalid_argument);
  EXPECT_THROW(parse_budget("evaluations=-1"), std::invalid_argument);
  eval::Ledger spent;
  spent.evaluations = 15;
  EXPECT_FALSE(budget_exhausted(spent, b));
  spent.wall_s = 61;
  EXPECT_TRUE(budget_exhausted(spent, b));
}

TEST(LayeredProgram, AProposalReplacesOneLayerAndTheDiffShowsIt) {
  LayeredProgram p;
  p.compute = "pattern a.b {\n}\n";
  p.schedule = "schedule cpu {\n  parallel(y, r)\n}\n";
  const LayeredProgram q = p.with(Layer::Memory, "memory cpu {\n  nontemporal(y)\n}\n");
  EXPECT_EQ(q.schedule, p.schedule);
  EXPECT_NE(q.ir_text().find("nontemporal(y)"), std::string::npos);
  const std::string diff = unified_diff(p.ir_text(), q.ir_text());
  EXPECT_NE(diff.find("+  nontemporal(y)"), std::string::npos) << diff;
  EXPECT_EQ(diff.find("-  parallel(y, r)"), std::string::npos) << diff;
  EXPECT_TRUE(unified_diff("a\n", "a\n").empty());
}

TEST(LayeredProgram, TheDiffShowsThreeLinesAroundEachChange) {
  const std::string before = "1\n2\n3\n4\n5\n6\n7\n8\n9\n";
  const std::string after = "1\n2\n3\n4\n5\nsix\n7\n8\n9\n";
  EXPECT_EQ(unified_diff(before, after), "--- before\n+++ after\n@@ -3,7 +3,7 @@\n 3\n 4\n 5\n-6\n+six\n 7\n 8\n 9\n");
}

}  // namespace
}  // namespace ekb::agent
