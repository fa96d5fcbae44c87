// compute_at, compute_inline and compute_root alone: the producer's box is computed where the
// consumer needs it (into a buffer of the box's size), inlined reads become the definition, and
// placements that would compute too little or change what the producer reads are errors.
#include <gtest/gtest.h>

#include "lower_test_util.h"

namespace ekb::lower::testing {
namespace {

// A separable 3x3 box filter over the valid region: bx is the producer, dst its consumer.
const char* kBlur =
    "  params H, W\n  input src : f32[H + 2, W + 2] in [-1, 1]\n  output dst : f32[H, W]\n  temp bx : f32[H + 2, W]\n"
    "  bx[y, x] = src[y, x] + src[y, x + 1] + src[y, x + 2]\n"
    "  dst[y, x] = bx[y, x] + bx[y + 1, x] + bx[y + 2, x]";
const char* kBlurSize = "H = 10, W = 13";

TEST(ScheduleComputeAt, RowTileComputesItsRowsPlusTheApron) {
  std::string text = with_schedule(kBlur, kBlurSize, "split(dst, y, 4, yo, yi)\n  compute_at(bx, dst, yo)");
  std::string lir = scheduled_lir(text);
  // 4 rows of dst read 6 rows of bx; the buffer lives inside yo.
  EXPECT_NE(lir.find("allocate bx: f32[78] in global"), std::string::npos) << lir;
  EXPECT_LT(lir.find("for yo in"), lir.find("allocate bx")) << lir;
  EXPECT_EQ(matches_reference(text), "");
}

TEST(ScheduleComputeAt, ParallelTilesWithShiftedTailsGetPrivateBuffers) {
  std::string text = with_schedule(kBlur, kBlurSize,
                                   "split(dst, y, 4, yo, yi, tail=shift_inwards)\n  compute_at(bx, dst, yo)\n"
                                   "  parallel(dst, yo)\n  vectorize(bx, x, 4)");
  EXPECT_EQ(matches_reference(text), "");
}

TEST(ScheduleComputeAt, InnermostLoopAndPeeledCopies) {
  EXPECT_EQ(matches_reference(with_schedule(kBlur, kBlurSize, "compute_at(bx, dst, x)")), "");
  // A peeled split leaves a main and a tail copy of yi, each computing its box.
  std::string peeled = with_schedule(kBlur, kBlurSize, "split(dst, y, 4, yo, yi, tail=peel)\n  compute_at(bx, dst, yi)");
  EXPECT_EQ(matches_reference(peeled), "");
  // yo holds only the main part: the tail's reads are outside it.
  std::string e = schedule_error(with_schedule(kBlur, kBlurSize, "split(dst, y, 4, yo, yi, tail=peel)\n  compute_at(bx, dst, yo)"));
  EXPECT_NE(e.find("does not cover every read"), std::string::npos) << e;
}

TEST(ScheduleComputeAt, GuardedTailStillComputesOneRowPerIteration) {
  // 7 rows in blocks of 4: in the last block the consumer's row loop runs (min(r, 6) - r) + 1
  // times, at most once, so e's box is one row, not the whole tensor recomputed per row.
  std::string text = with_schedule(
      "  params R, C\n  input x : f32[R, C] in [-1, 1]\n  output y : f32[R, C]\n  temp e : f32[R, C]\n"
      "  temp s : f32[R]\n  e[r, c] = exp(x[r, c])\n  s[r] = sum(c in 0..C: e[r, c])\n  y[r, c] = e[r, c] / s[r]",
      "R = 7, C = 9", "split(y, r, 4, ro, ri)\n  compute_at(s, y, ri)\n  compute_at(e, y, ri)");
  std::string lir = scheduled_lir(text);
  EXPECT_NE(lir.find("allocate e: f32[9] in global"), std::string::npos) << lir;
  EXPECT_EQ(matches_reference(text), "");
}

TEST(ScheduleComputeAt, ReductionProducerPerRow) {
  std::string text = with_schedule(
      "  params R, C\n  input x : f32[R, C] in [-1, 1]\n  output y : f32[R, C]\n  temp m : f32[R]\n"
      "  m[r] = max(c in 0..C: x[r, c])\n  y[r, c] = exp(x[r, c] - m[r])",
      "R = 5, C = 9", "compute_at(m, y, r)");
  EXPECT_NE(scheduled_lir(text).find("allocate m: f32[1]"), std::string::npos) << scheduled_lir(text);
  EXPECT_EQ(matches_reference(text), "");
}

TEST(ScheduleComputeAt, ProducerReadByAnotherPlacedProducerKeepsItsRowBox) {
  // Layer norm's statistics: var reads mean, y reads both. Placing var first and then mean into
  // the same row loop must size mean for the one row var and y read, not the whole tensor (the
  // clamps of var's placed loop into [0, R) made mean's box non-affine and hence whole).
  std::string text = with_schedule(
      "  params R, C\n  input x : f32[R, C] in [-1, 1]\n  output y : f32[R, C]\n  temp mean : f32[R]\n"
      "  temp var : f32[R]\n  mean[r] = sum(c in 0..C: x[r, c])\n"
      "  var[r] = sum(c in 0..C: (x[r, c] - mean[r]) * (x[r, c] - mean[r]))\n"
      "  y[r, c] = (x[r, c] - mean[r]) * var[r]",
      "R = 7, C = 9", "compute_at(var, y, r)\n  compute_at(mean, y, r)\n  parallel(y, r)");
  std::string lir = scheduled_lir(text);
  EXPECT_NE(lir.find("allocate mean: f32[1]"), std::string::npos) << lir;
  EXPECT_NE(lir.find("allocate var: f32[1]"), std::string::npos) << lir;
  EXPECT_EQ(matches_reference(text), "");
}

TEST(ScheduleComputeAt, ProducerReadWithABoundary) {
  EXPECT_EQ(matches_reference(with_schedule(
                "  params N\n  input x : f32[N] in [-1, 1]\n  output y : f32[N]\n  temp t : f32[N]\n"
                "  t[i] = x[i] * x[i]\n  y[i] = edge(t)[i - 1] + pad(t, 0.5)[i + 1]",
                "N = 11", "split(y, i, 4, io, ii)\n  compute_at(t, y, io)")),
            "");
}

TEST(ScheduleComputeAt, LoopThatDoesNotCoverEveryReadIsAnError) {
  std::string e = schedule_error(with_schedule(
      "  params N\n  input x : f32[N] in [-1, 1]\n  output y : f32[N]\n  output z : f32[N]\n  temp t : f32[N]\n"
      "  t[i] = x[i] * 2.0\n  y[i] = t[i]\n  z[i] = t[i] + 1.0",
      "N = 8", "compute_at(t, y, i)"));
  EXPECT_NE(e.find("'compute_at(t, y, i)': loop 'i' does not cover every read of 't'"), std::string::npos) << e;
}

TEST(ScheduleComputeAt, IllegalProducersAreErrors) {
  // An output, a temp with an update, a producer split before it is placed, a stage that does not read it.
  std::string e = schedule_error(with_schedule(kBlur, kBlurSize, "compute_at(dst, dst, x)"));
  EXPECT_NE(e.find("error"), std::string::npos) << e;
  e = schedule_error(with_schedule(
      "  params N\n  input x : f32[N] in [-1, 1]\n  output y : f32[N]\n  temp t : f32[N]\n"
      "  t[i] = x[i]\n  t[0] = 1.0\n  y[i] = t[i]",
      "N = 8", "compute_at(t, y, i)"));
  EXPECT_NE(e.find("would stay at root"), std::string::npos) << e;
  e = schedule_error(with_schedule(kBlur, kBlurSize, "split(bx, y, 2, yo, yi)\n  compute_at(bx, dst, y)"));
  EXPECT_NE(e.find("no longer run over its whole extent"), std::string::npos) << e;
  EXPECT_NE(e.find("hint: write compute_at first"), std::string::npos) << e;
}

TEST(ScheduleComputeInline, ReadsBecomeTheDefinition) {
  std::string text = with_schedule(kBlur, kBlurSize, "compute_inline(bx)\n  parallel(dst, y)");
  std::string lir = scheduled_lir(text);
  EXPECT_EQ(lir.find("bx"), std::string::npos) << lir;
  EXPECT_EQ(matches_reference(text), "");
}

TEST(ScheduleComputeInline, ReductionOrUpdatesAreErrors) {
  std::string e = schedule_error(with_schedule(
      "  params R, C\n  input x : f32[R, C] in [-1, 1]\n  output y : f32[R, C]\n  temp m : f32[R]\n"
      "  m[r] = max(c in 0..C: x[r, c])\n  y[r, c] = x[r, c] - m[r]",
      "R = 5, C = 9", "compute_inline(m)"));
  EXPECT_NE(e.find("not computed by a single expression"), std::string::npos) << e;
}

TEST(ScheduleComputeRoot, DefaultPlacementAndNoUndo) {
  EXPECT_EQ(matches_reference(with_schedule(kBlur, kBlurSize, "compute_root(bx)")), "");
  std::string e = schedule_error(with_schedule(kBlur, kBlurSize, "compute_at(bx, dst, y)\n  compute_root(bx)"));
  EXPECT_NE(e.find("already placed (dst.y)"), std::string::npos) << e;
}

}  // namespace
}  // namespace ekb::lower::testing
