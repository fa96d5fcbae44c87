// split and tile alone: every tail strategy keeps results, and the strategies that would be wrong
// for a stage are errors.
#include <gtest/gtest.h>

#include "lower_test_util.h"

namespace ekb::lower::testing {
namespace {

// 10 x 13: no factor below divides 13.
std::string scale(const std::string& schedule) {
  return with_schedule("  params R, C\n  input x : f32[R, C] in [-1, 1]\n  output y : f32[R, C]\n"
                       "  y[i, j] = 2.0 * x[i, j] + 1.0",
                       "R = 10, C = 13", schedule);
}

// A prefix sum: an update whose ordered loop reads what earlier iterations wrote.
std::string scan(const std::string& schedule) {
  return with_schedule("  params N\n  input x : f32[N] in [-1, 1]\n  output y : f32[N]\n"
                       "  y[i] = x[i]\n  for t in 1..N: y[t] = y[t - 1] + x[t]",
                       "N = 37", schedule);
}

TEST(ScheduleSplit, EveryTailStrategyMatchesTheReference) {
  for (const char* tail : {"guard", "shift_inwards", "peel"})
    EXPECT_EQ(matches_reference(scale(std::string("split(y, j, 4, jo, ji, tail=") + tail + ")")), "") << tail;
  EXPECT_EQ(matches_reference(scale("split(y, i, 5, io, ii, tail=round_up)")), "");  // 5 divides 10
}

TEST(ScheduleSplit, GuardLeavesAnInnermostCondition) {
  std::string lir = scheduled_lir(scale("split(y, j, 4, jo, ji)"));
  EXPECT_NE(lir.find("for jo in [0, +"), std::string::npos) << lir;
  EXPECT_NE(lir.find("for ji in [0, +4)"), std::string::npos) << lir;
  EXPECT_NE(lir.find("if ("), std::string::npos) << lir;
}

TEST(ScheduleSplit, PeelLeavesATailLoopWithoutCondition) {
  std::string lir = scheduled_lir(scale("split(y, j, 4, jo, ji, tail=peel)"));
  EXPECT_EQ(lir.find("if ("), std::string::npos) << lir;
  EXPECT_NE(lir.find("for ji_1 in [0, +1)"), std::string::npos) << lir;  // 13 = 3 * 4 + 1
}

TEST(ScheduleSplit, OrderedLoopsSplitWithEveryOrderPreservingTail) {
  EXPECT_EQ(matches_reference(scan("split(y.update(0), t, 8, to, ti)")), "");
  EXPECT_EQ(matches_reference(scan("split(y.update(0), t, 8, to, ti, tail=peel)")), "");
}

TEST(ScheduleSplit, ShiftInwardsOnANonIdempotentUpdateIsAnError) {
  std::string e = schedule_error(scan("split(y.update(0), t, 8, to, ti, tail=shift_inwards)"));
  EXPECT_NE(e.find("test.ekb:"), std::string::npos) << e;
  EXPECT_NE(e.find("shift_inwards runs some iterations of loop 't' twice"), std::string::npos) << e;
  EXPECT_NE(e.find("reads y, which it writes"), std::string::npos) << e;
}

TEST(ScheduleSplit, RoundUpPastTheExtentIsAnError) {
  std::string e = schedule_error(scale("split(y, j, 4, jo, ji, tail=round_up)"));
  EXPECT_NE(e.find("round_up would run loop 'j' to 16, past its extent 13"), std::string::npos) << e;
}

TEST(ScheduleSplit, ShiftInwardsOnAReductionLoopIsAnError) {
  std::string text = with_schedule("  params N\n  input x : f32[N] in [-1, 1]\n  output s : f32[1]\n"
                                   "  s[o] = sum(k in 0..N: x[k])",
                                   "N = 30", "split(s, k, 8, ko, ki, tail=shift_inwards)");
  EXPECT_NE(schedule_error(text).find("accumulator declared outside the loop"), std::string::npos)
      << schedule_error(text);
}

TEST(ScheduleSplit, TileSplitsBothLoopsAndOrdersTheBlocksOutside) {
  std::string text = scale("tile(y, i, j, 4, 8, io, jo, ii, ji)");
  std::string lir = scheduled_lir(text);
  size_t io = lir.find("for io"), jo = lir.find("for jo"), ii = lir.find("for ii"), ji = lir.find("for ji");
  ASSERT_NE(ji, std::string::npos) << lir;
  EXPECT_TRUE(io < jo && jo < ii && ii < ji) << lir;
  EXPECT_EQ(matches_reference(text), "");
}

}  // namespace
}  // namespace ekb::lower::testing
