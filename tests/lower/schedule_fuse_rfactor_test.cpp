// fuse and rfactor alone, and bind, which has no meaning on cpu.
#include <gtest/gtest.h>

#include "lower_test_util.h"

namespace ekb::lower::testing {
namespace {

const char* kRowSum =
    "  params R, C\n  input x : f32[R, C] in [-1, 1]\n  output y : f32[R]\n"
    "  y[r] = 2.0 * sum(c in 0..C: x[r, c])";

TEST(ScheduleFuse, FusedLoopCoversBothAndParallelizes) {
  std::string text = with_schedule(
      "  params A, B, C\n  input x : f32[A, B, C] in [-1, 1]\n  output y : f32[A, B, C]\n"
      "  y[a, b, c] = x[a, b, c] * x[a, b, c]",
      "A = 3, B = 5, C = 7", "fuse(y, a, b, ab)\n  parallel(y, ab)");
  std::string lir = scheduled_lir(text);
  EXPECT_NE(lir.find("for ab in [0, +15) parallel"), std::string::npos) << lir;
  EXPECT_EQ(matches_reference(text), "");
}

TEST(ScheduleFuse, NonAdjacentLoopsAreAnError) {
  std::string e = schedule_error(with_schedule(
      "  params A, B, C\n  input x : f32[A, B, C] in [-1, 1]\n  output y : f32[A, B, C]\n  y[a, b, c] = x[a, b, c]",
      "A = 3, B = 5, C = 7", "fuse(y, a, c, ac)"));
  EXPECT_NE(e.find("not directly inside"), std::string::npos) << e;
}

TEST(ScheduleFuse, SplitOfAFusedAwayLoopIsAVerifierError) {
  std::string e = schedule_error(with_schedule(
      "  params A, B\n  input x : f32[A, B] in [-1, 1]\n  output y : f32[A, B]\n  y[a, b] = x[a, b]",
      "A = 3, B = 5", "fuse(y, a, b, ab)\n  split(y, a, 2, ao, ai)"));
  EXPECT_NE(e.find("was fused into ab"), std::string::npos) << e;
}

TEST(ScheduleRfactor, PartialSumsInParallel) {
  std::string text = with_schedule(kRowSum, "R = 5, C = 70",
                                   "split(y, c, 16, co, ci)\n  rfactor(y, co, cf)\n  parallel(cf, cf)\n"
                                   "  unroll(cf, ci, 4)");
  std::string lir = scheduled_lir(text);
  EXPECT_NE(lir.find("allocate y_cf"), std::string::npos) << lir;
  EXPECT_NE(lir.find(") parallel"), std::string::npos) << lir;
  EXPECT_EQ(matches_reference(text), "");
}

TEST(ScheduleRfactor, ArgmaxCannotBeReassociated) {
  std::string e = schedule_error(with_schedule(
      "  params R, C\n  input x : f32[R, C] in [-1, 1]\n  output y : i64[R]\n  y[r] = argmax(c in 0..C: x[r, c])",
      "R = 4, C = 8", "rfactor(y, c, cf)"));
  EXPECT_NE(e.find("argmax"), std::string::npos) << e;
}

TEST(ScheduleRfactor, InnerReductionLoopOfThePartialStageStaysSerial) {
  std::string e = schedule_error(with_schedule(kRowSum, "R = 5, C = 70",
                                               "split(y, c, 16, co, ci)\n  rfactor(y, co, cf)\n  vectorize(cf, ci, 8)"));
  EXPECT_NE(e.find("'ci' is a reduction loop of 'cf'"), std::string::npos) << e;
}

TEST(ScheduleRfactor, PureLoopIsNotAReduction) {
  std::string e = schedule_error(with_schedule(kRowSum, "R = 5, C = 70", "rfactor(y, r, rf)"));
  EXPECT_NE(e.find("not a reduction loop"), std::string::npos) << e;
}

TEST(ApplySchedule, GpuBlocksAreIgnoredOnCpuAndBindIsAnErrorThere) {
  const char* body = "  params N\n  input x : f32[N] in [-1, 1]\n  output y : f32[N]\n  y[i] = x[i]";
  EXPECT_EQ(schedule_error(pattern(body, "N = 8") + "schedule gpu {\n  bind(y, i, thread.x)\n}\n"), "");
  EXPECT_NE(schedule_error(pattern(body, "N = 8") + "schedule cpu {\n  bind(y, i, thread.x)\n}\n").find("no meaning on cpu"),
            std::string::npos);
}

}  // namespace
}  // namespace ekb::lower::testing
