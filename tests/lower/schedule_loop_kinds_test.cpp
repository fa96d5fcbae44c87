// parallel, vectorize and unroll alone: legal loops run as marked (and vectorized code really is
// SIMD), loops that carry a dependence are errors.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <sstream>

#include "schedule_test_util.h"
#include "test_paths.h"

namespace ekb::lir {
namespace {

using testing::matches_reference;
using testing::with_schedule;
using testing::schedule_error;
using testing::scheduled_lir;

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

// The emitted vectorized loop compiles to packed AVX/SSE arithmetic at -O3 -march=native.
TEST(ScheduleLoopKinds, VectorizedLoopIsPackedSimdInTheAssembly) {
  auto l = ir::testing::load(with_schedule(kAxpy, "R = 4, C = 64", "vectorize(y, j, 8)"));
  ASSERT_TRUE(l.inst) << l.diags;
  std::string source = codegen::emit_c_source(*l.inst);
  ASSERT_NE(source.find("#pragma clang loop vectorize(assume_safety)"), std::string::npos) << source;
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
}  // namespace ekb::lir
