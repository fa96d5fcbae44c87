// parallel, vectorize and unroll alone: legal loops run as marked (and vectorized code really is
// SIMD), loops that carry a dependence are errors.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <sstream>

#include "lower_test_util.h"
#include "test_paths.h"

namespace ekb::lower::testing {
namespace {

const char* kAxpy =
    "  params R, C\n  input x : f32[R, C] in [-1, 1]\n  input z : f32[R, C] in [-1, 1]\n  output y : f32[R, C]\n"
    "  y[i, j] = 1.5 * x[i, j] + z[i, j]";

// A one-pole IIR filter: the time loop carries the recurrence, the channel loop is free.
const char* kIir =
    "  params N, T\n  input x : f32[T, N] in [-1, 1]\n  output y : f32[T, N]\n"
    "  y[t, n] = x[t, n]\n  for t in 1..T: y[t, n] = 0.5 * y[t - 1, n] + x[t, n]";

TEST(ScheduleLoopKinds, ParallelAndUnrollMatchTheReference) {
  std::string text = with_schedule(kAxpy, "R = 9, C = 21", "parallel(y, i)\n  unroll(y, j, 4)");
  std::string lir = scheduled_lir(text);
  EXPECT_NE(lir.find("for i in [0, +9) parallel"), std::string::npos) << lir;
  EXPECT_NE(lir.find("for j_unrolled in [0, +4) unrolled"), std::string::npos) << lir;
  EXPECT_EQ(matches_reference(text), "");
}

TEST(ScheduleLoopKinds, ParallelOverTheFreeChannelsOfARecurrence) {
  EXPECT_EQ(matches_reference(with_schedule(kIir, "N = 12, T = 20", "parallel(y.update(0), n)")), "");
}

TEST(ScheduleLoopKinds, ParallelTimeLoopOfARecurrenceIsAnError) {
  std::string e = schedule_error(with_schedule(kIir, "N = 12, T = 20", "parallel(y.update(0), t)"));
  EXPECT_NE(e.find("test.ekb:12:1: error: 'parallel(y.update(0), t)': cannot parallelize loop 't'"),
            std::string::npos)
      << e;
  EXPECT_NE(e.find("ordered loop"), std::string::npos) << e;
  e = schedule_error(with_schedule(kIir, "N = 12, T = 20", "vectorize(y.update(0), t, 4)"));
  EXPECT_NE(e.find("cannot vectorize loop 't'"), std::string::npos) << e;
}

// Jacobi-2D (the suite's linalg.jacobi_2d): each time step writes B from A, then A from B. The time
// loop is ordered; the spatial loops inside one step read only the other buffer.
const char* kJacobi =
    "  params T, N\n  input A_in : f32[N, N] in [0, 1]\n  output A : f32[N, N]\n  temp B : f32[N, N]\n"
    "  A[i, j] = A_in[i, j]\n  B[i, j] = A_in[i, j]\n"
    "  for t in 0..T {\n"
    "    for i in 1..N - 1, j in 1..N - 1: B[i, j] = 0.2 * (A[i, j] + A[i, j - 1] + A[i, j + 1] + A[i + 1, j] + A[i - 1, j])\n"
    "    for i in 1..N - 1, j in 1..N - 1: A[i, j] = 0.2 * (B[i, j] + B[i, j - 1] + B[i, j + 1] + B[i + 1, j] + B[i - 1, j])\n"
    "  }";

TEST(ScheduleLoopKinds, SpatialLoopsOfAJacobiTimeStepRunInParallel) {
  std::string text = with_schedule(kJacobi, "T = 3, N = 37",
                                   "parallel(B.update(0), i)\n  vectorize(B.update(0), j, 8)\n"
                                   "  split(A.update(0), i, 4, io, ii)\n  parallel(A.update(0), io)\n"
                                   "  vectorize(A.update(0), j, 8)");
  std::string lir = scheduled_lir(text);
  EXPECT_NE(lir.find("for i_2 in [1, +((37 - 1) - 1)) parallel"), std::string::npos) << lir;
  EXPECT_NE(lir.find("for io in [0, +9) parallel"), std::string::npos) << lir;
  EXPECT_NE(lir.find("vectorized"), std::string::npos) << lir;
  EXPECT_EQ(matches_reference(text), "");
}

TEST(ScheduleLoopKinds, TimeLoopOfJacobiStaysOrdered) {
  std::string e = schedule_error(with_schedule(kJacobi, "T = 3, N = 37", "parallel(B.update(0), t)"));
  EXPECT_NE(e.find("cannot parallelize loop 't': 't' is an ordered loop of update 'B.update(0)' whose iterations "
                   "depend on each other"),
            std::string::npos)
      << e;
}

// Gauss-Seidel: the same sweep in place, so row i reads row i - 1 of this very step.
TEST(ScheduleLoopKinds, InPlaceGaussSeidelSweepIsAnError) {
  std::string text =
      "  params T, N\n  input A_in : f32[N, N] in [0, 1]\n  output A : f32[N, N]\n  A[i, j] = A_in[i, j]\n"
      "  for t in 0..T, i in 1..N - 1, j in 1..N - 1:\n"
      "    A[i, j] = 0.2 * (A[i, j] + A[i, j - 1] + A[i, j + 1] + A[i + 1, j] + A[i - 1, j])";
  std::string e = schedule_error(with_schedule(text, "T = 2, N = 20", "parallel(A.update(0), i)"));
  EXPECT_NE(e.find("cannot parallelize loop 'i': 'i' is an ordered loop of update 'A.update(0)' whose iterations "
                   "depend on each other: it writes A[i_1, j_1] but reads A[i_1, (j_1 - 1)]"),
            std::string::npos)
      << e;
  e = schedule_error(with_schedule(text, "T = 2, N = 20", "vectorize(A.update(0), j, 8)"));
  EXPECT_NE(e.find("cannot vectorize loop 'j'"), std::string::npos) << e;
}

// Iterations of an ordered loop that store to one element (y[i / 2] from i = 2m and 2m + 1) race,
// even though each reads only the element it writes.
TEST(ScheduleLoopKinds, OrderedLoopStoringOneElementFromSeveralIterationsIsAnError) {
  std::string text =
      "  params N\n  input x : f32[N] in [-1, 1]\n  output y : f32[N]\n  y[i] = x[i]\n"
      "  for i in 0..N: y[i / 2] = y[i / 2] + x[i]";
  std::string e = schedule_error(with_schedule(text, "N = 16", "parallel(y.update(0), i)"));
  EXPECT_NE(e.find("different iterations may write the same element of y"), std::string::npos) << e;
  e = schedule_error(with_schedule(text, "N = 16", "split(y.update(0), i, 2, io, ii)\n  parallel(y.update(0), ii)"));
  EXPECT_NE(e.find("different iterations may write the same element of y"), std::string::npos) << e;
}

TEST(ScheduleLoopKinds, ReductionLoopNeedsRfactor) {
  std::string e = schedule_error(with_schedule(
      "  params N\n  input x : f32[N] in [-1, 1]\n  output s : f32[1]\n  s[o] = sum(k in 0..N: x[k])", "N = 64",
      "parallel(s, k)"));
  EXPECT_NE(e.find("reduction loop"), std::string::npos) << e;
  EXPECT_NE(e.find("hint: rfactor"), std::string::npos) << e;
}

TEST(ScheduleLoopKinds, FreeLoopReadingOtherElementsIsAnError) {
  std::string e = schedule_error(with_schedule(
      "  params N\n  input x : f32[N] in [-1, 1]\n  output y : f32[N]\n"
      "  y[i] = x[i]\n  y[i] = y[max(i - 1, 0)] + x[i]",
      "N = 16", "parallel(y.update(0), i)"));
  EXPECT_NE(e.find("depend on each other"), std::string::npos) << e;
}

TEST(ScheduleLoopKinds, VectorizeSplitsByTheWidthAndPeelsTheRest) {
  std::string text = with_schedule(kAxpy, "R = 3, C = 21", "vectorize(y, j, 8)");
  std::string lir = scheduled_lir(text);
  EXPECT_NE(lir.find("for j_vector in [0, +8) vectorized"), std::string::npos) << lir;
  EXPECT_EQ(matches_reference(text), "");
}

// The emitted vectorized loop (explicit SIMD: codegen/simd_loop.h) compiles to packed AVX/SSE
// arithmetic at -O3 -march=native.
TEST(ScheduleLoopKinds, VectorizedLoopIsPackedSimdInTheAssembly) {
  auto l = ir::testing::load(with_schedule(kAxpy, "R = 4, C = 64", "vectorize(y, j, 8)"));
  ASSERT_TRUE(l.inst) << l.diags;
  std::string source = codegen::emit_c_source(lower::lower(*l.inst));
  ASSERT_NE(source.find("8 lanes at once"), std::string::npos) << source;
  std::string c = ekb::testing::private_temp_path("ekb_vectorize", ".c");
  std::string s = ekb::testing::private_temp_path("ekb_vectorize", ".s");
  std::ofstream(c) << source;
  std::string cmd = "clang -O3 -march=native -fno-unroll-loops -S -include " EKB_SOURCE_DIR
                    "/include/ekb/ekb_abi.h " + c + " -o " + s + " 2>&1";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  std::stringstream asm_text;
  asm_text << std::ifstream(s).rdbuf();
  std::string a = asm_text.str();
  bool packed = a.find("vfmadd") != std::string::npos && a.find("ps") != std::string::npos;
  packed |= a.find("vmulps") != std::string::npos || a.find("mulps") != std::string::npos;
  EXPECT_TRUE(packed) << a;
  EXPECT_TRUE(a.find("ymm") != std::string::npos || a.find("xmm") != std::string::npos) << a;
  EXPECT_EQ(a.find("vmulss"), std::string::npos) << "scalar multiplies left in the vector loop\n" << a;
  std::remove(c.c_str());
  std::remove(s.c_str());
}

}  // namespace
}  // namespace ekb::lower::testing
