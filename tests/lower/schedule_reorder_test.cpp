// reorder alone: pure loops in any order, a reduction loop moved out of its statement (in place,
// or through an accumulator temp), and the reorders that would reverse a dependence.
#include <gtest/gtest.h>

#include "lower_test_util.h"

namespace ekb::lower::testing {
namespace {

const char* kMatmul =
    "  params M, N, K\n  input a : f32[M, K] in [-1, 1]\n  input b : f32[K, N] in [-1, 1]\n"
    "  input c : f32[M, N] in [-1, 1]\n  output y : f32[M, N]\n"
    "  y[i, j] = c[i, j] + sum(k in 0..K: a[i, k] * b[k, j])";
const char* kMatmulSizes = "M = 7, N = 10, K = 9";

TEST(ScheduleReorder, PureLoopsSwap) {
  std::string text = with_schedule(kMatmul, kMatmulSizes, "reorder(y, j, i)");
  std::string lir = scheduled_lir(text);
  EXPECT_LT(lir.find("for j"), lir.find("for i")) << lir;
  EXPECT_EQ(matches_reference(text), "");
}

TEST(ScheduleReorder, ReductionLoopOutwardAccumulatesInTheOutput) {
  std::string text = with_schedule(kMatmul, kMatmulSizes, "reorder(y, k, i, j)");
  std::string lir = scheduled_lir(text);
  // Initialized to c, then y[i, j] += ...: no temp, k outermost in the accumulation nest.
  EXPECT_EQ(lir.find("allocate"), std::string::npos) << lir;
  EXPECT_LT(lir.find("for k"), lir.find("y[i_2, j_2] = (y[i_2, j_2] +")) << lir;
  EXPECT_EQ(matches_reference(text), "");
}

TEST(ScheduleReorder, ReductionLoopOutwardUsesATempWhenTheStatementIsNotTheSum) {
  std::string text = with_schedule(
      "  params R, C\n  input x : f32[R, C] in [-1, 1]\n  output y : f32[R]\n"
      "  y[r] = exp(0.1 * max(c in 0..C: x[r, c]))",
      "R = 6, C = 11", "reorder(y, c, r)");
  std::string lir = scheduled_lir(text);
  EXPECT_NE(lir.find("allocate y_acc"), std::string::npos) << lir;
  EXPECT_EQ(matches_reference(text), "");
}

TEST(ScheduleReorder, AfterTilingTheReductionGoesBetweenTheTiles) {
  std::string text = with_schedule(kMatmul, kMatmulSizes,
                                   "tile(y, i, j, 4, 4, io, jo, ii, ji)\n  reorder(y, io, jo, k, ii, ji)");
  EXPECT_EQ(matches_reference(text), "");
}

// Found by the property test: a shifted block recomputes elements, which an accumulation adds twice.
TEST(ScheduleReorder, ReductionCannotLeaveAStageWhoseLoopsRecompute) {
  std::string e = schedule_error(with_schedule(kMatmul, kMatmulSizes,
                                               "split(y, j, 4, jo, ji, tail=shift_inwards)\n  reorder(y, k, jo)"));
  EXPECT_NE(e.find("recomputes some iterations"), std::string::npos) << e;
  EXPECT_EQ(matches_reference(with_schedule(kMatmul, kMatmulSizes,
                                            "split(y, j, 4, jo, ji, tail=shift_inwards)\n  reorder(y, ji, jo)")),
            "");
}

TEST(ScheduleReorder, OrderedLoopsKeepTheirOrder) {
  std::string text = with_schedule(
      "  params N\n  input x : f32[N, N] in [-1, 1]\n  output y : f32[N, N]\n"
      "  y[i, j] = x[i, j]\n  for i in 1..N, j in 1..N: y[i, j] = y[i - 1, j] + y[i, j - 1]",
      "N = 5", "reorder(y.update(0), j, i)");
  std::string e = schedule_error(text);
  EXPECT_NE(e.find("'reorder(y.update(0), j, i)'"), std::string::npos) << e;
  EXPECT_NE(e.find("both are ordered loops"), std::string::npos) << e;
}

TEST(ScheduleReorder, AFreeLoopCrossesAnOrderedOneWhenItTouchesOnlyItsElement) {
  const char* body =
      "  params N, T\n  input x : f32[T, N] in [-1, 1]\n  output y : f32[N]\n"
      "  y[n] = 0.0\n  for t in 0..T: y[n] = 0.5 * y[n] + x[t, n]";
  EXPECT_EQ(matches_reference(with_schedule(body, "N = 9, T = 6", "reorder(y.update(0), n, t)")), "");
  const char* shifted =
      "  params N, T\n  input x : f32[T, N] in [-1, 1]\n  output y : f32[N]\n"
      "  y[n] = 0.0\n  for t in 0..T: y[n] = 0.5 * y[max(n - 1, 0)] + x[t, n]";
  EXPECT_NE(schedule_error(with_schedule(shifted, "N = 9, T = 6", "reorder(y.update(0), n, t)")).find("carries a dependence"),
            std::string::npos);
}

TEST(ScheduleReorder, ArgmaxLoopsStayInOrder) {
  std::string text = with_schedule(
      "  params R, C\n  input x : f32[R, C] in [-1, 1]\n  output y : i64[R]\n"
      "  y[r] = argmax(c in 0..C: x[r, c])",
      "R = 4, C = 8", "reorder(y, c, r)");
  EXPECT_NE(schedule_error(text).find("argmax/argmin"), std::string::npos) << schedule_error(text);
}

TEST(ScheduleReorder, TriangularBoundsStayInsideTheirLoop) {
  std::string text = with_schedule(
      "  params N\n  input x : f32[N, N] in [-1, 1]\n  output y : f32[N]\n"
      "  y[i] = sum(k in 0..i + 1: x[i, k])",
      "N = 6", "reorder(y, k, i)");
  EXPECT_NE(schedule_error(text).find("depend on loop 'i'"), std::string::npos) << schedule_error(text);
}

}  // namespace
}  // namespace ekb::lower::testing
