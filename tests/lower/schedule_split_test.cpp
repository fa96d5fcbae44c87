// split and tile alone: every tail strategy keeps results, and the strategies that would be wrong
// for a stage are errors (tail=mask with the vectorize it needs).
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
  EXPECT_EQ(matches_reference(scale("split(y, j, 4, jo, ji, tail=mask)\n  vectorize(y, ji, 4)")), "");
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

// tail=mask is guard's one loop nest (later directives see one nest), legal where shift_inwards
// is not: a read-modify-write update and a reduction into the output.
TEST(ScheduleSplit, MaskKeepsOneNestWithTheGuardOnTheLanes) {
  std::string lir = scheduled_lir(scale("split(y, j, 8, jo, ji, tail=mask)\n  vectorize(y, ji, 8)"));
  EXPECT_EQ(lir.find("ji_1"), std::string::npos) << "no peeled copy\n" << lir;
  EXPECT_NE(lir.find("vectorized"), std::string::npos) << lir;
  EXPECT_NE(lir.find("if ("), std::string::npos) << lir;
}

TEST(ScheduleSplit, MaskIsLegalOnReadModifyWriteUpdatesAndReductions) {
  std::string rmw = with_schedule("  params R, C\n  input x : f32[R, C] in [-1, 1]\n  output y : f32[R, C]\n"
                                  "  y[i, j] = x[i, j]\n  y[i, j] = 1.5 * y[i, j] + x[i, j]",
                                  "R = 5, C = 37", "split(y.update(0), j, 16, jo, ji, tail=mask)\n  vectorize(y.update(0), ji, 16)");
  EXPECT_EQ(schedule_error(rmw), "");
  EXPECT_EQ(matches_reference(rmw), "");
  std::string into_output = with_schedule("  params N, K\n  input x : f32[K] in [-1, 1]\n  input w : f32[K, N] in [-1, 1]\n"
                                          "  output y : f32[N]\n  y[n] = sum(k in 0..K: x[k] * w[k, n])",
                                          "N = 45, K = 7",
                                          "split(y, n, 32, no, ni, tail=mask)\n  reorder(y, no, k, ni)\n  vectorize(y, ni, 16)");
  EXPECT_EQ(schedule_error(into_output), "");
  EXPECT_EQ(matches_reference(into_output), "");
}

TEST(ScheduleSplit, MaskWithoutAVectorizedLoopInsideIsAnError) {
  std::string e = schedule_error(scale("split(y, j, 4, jo, ji, tail=mask)"));
  EXPECT_NE(e.find("test.ekb:"), std::string::npos) << e;
  EXPECT_NE(e.find("loop 'ji' of 'y' was split with tail=mask, but neither it nor a loop inside it is vectorized"),
            std::string::npos)
      << e;
  // A masked row block whose columns are vectorized runs as vector code: legal.
  EXPECT_EQ(schedule_error(scale("split(y, i, 4, io, ii, tail=mask)\n  vectorize(y, j, 8, tail=mask)")), "");
  EXPECT_EQ(matches_reference(scale("split(y, i, 4, io, ii, tail=mask)\n  vectorize(y, j, 8, tail=mask)")), "");
}

TEST(ScheduleSplit, MaskOnAGpuIsAnError) {
  std::string text = pattern("  params N\n  input x : f32[N] in [-1, 1]\n  output y : f32[N]\n  y[i] = 2.0 * x[i]", "N = 37") +
                     "schedule gpu {\n  split(y, i, 32, io, ii, tail=mask)\n  bind(y, io, block.x)\n  bind(y, ii, thread.x)\n}\n";
  auto l = ir::testing::load(text);
  ASSERT_TRUE(l.inst) << l.diags;
  LowerOptions o;
  o.target = ir::Target::Cuda;
  o.stop_after = "apply_schedule";
  try {
    lower(*l.inst, o);
    ADD_FAILURE() << "tail=mask lowered for a gpu";
  } catch (const ScheduleError& e) {
    EXPECT_NE(std::string(e.what()).find("a gpu has no SIMD lanes to mask"), std::string::npos) << e.what();
  }
}

// vectorize(..., tail=mask): the remainder is one more vector, guarded, instead of a peeled loop;
// a loop shorter than the width becomes one masked vector.
TEST(ScheduleSplit, VectorizeWithAMaskedTailRunsTheRemainderAsOneVector) {
  std::string lir = scheduled_lir(scale("vectorize(y, j, 8, tail=mask)"));
  EXPECT_EQ(lir.find("j_vector_1"), std::string::npos) << lir;
  EXPECT_NE(lir.find("if ("), std::string::npos) << lir;
  EXPECT_EQ(matches_reference(scale("vectorize(y, j, 8, tail=mask)")), "");
  EXPECT_EQ(matches_reference(scale("vectorize(y, j, 16, tail=mask)")), "");  // 13 < 16
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
