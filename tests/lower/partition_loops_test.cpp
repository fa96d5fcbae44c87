// partition_loops: a loop whose boundary reads leave their buffer only near its ends becomes up
// to three loops, and simplify removes every check from the middle one. The programs must still
// match the reference at every size, including those too small for a middle loop.
#include "lower/partition_loops.h"

#include <gtest/gtest.h>

#include "lower_test_util.h"

namespace ekb::lower::testing {
namespace {

int count(const std::string& text, const std::string& what) {
  int n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

const char* kStencil = R"(
  params H, W
  input  x : f32[H, W] in [-1, 1]
  output m : f32[H, W]
  m[i, j] = sum(di in -1..2, dj in -1..2: mirror(x)[i + di, j + dj])
)";

TEST(PartitionLoops, StencilRowsAndColumnsSplitIntoEdgesAndInterior) {
  auto l = lower_text(pattern(kStencil, "H = 6, W = 9"), "partition_loops");
  // i: [0, 1) [1, 5) [5, 6); j likewise inside each, so 3 + 9 loops over the two variables.
  EXPECT_EQ(count(l.body, "for i"), 3) << l.body;  // i, and i_N for the edge copies
  EXPECT_EQ(count(l.body, "for j"), 9) << l.body;
}

TEST(PartitionLoops, SimplifyLeavesTheInteriorWithoutChecks) {
  // A 5x5 reach, so that the edge loops have two iterations each and stay loops.
  const char* stencil5 = R"(
  params H, W
  input  x : f32[H, W] in [-1, 1]
  output m : f32[H, W]
  m[i, j] = sum(di in -2..3, dj in -2..3: mirror(x)[i + di, j + dj])
)";
  LowerOptions whole;
  whole.partition_loops = false;
  EXPECT_NE(lower_text(pattern(stencil5, "H = 8, W = 9"), "", whole).body.find("mirror_index"), std::string::npos);
  std::string body = lower_text(pattern(stencil5, "H = 8, W = 9")).body;
  // The interior keeps the names i and j; the edge copies are i_N and j_N.
  size_t rows = body.find("for i in");
  ASSERT_NE(rows, std::string::npos) << body;
  size_t cols = body.find("for j in", rows);
  ASSERT_NE(cols, std::string::npos) << body;
  size_t next = body.find("for j_", cols);
  std::string interior = body.substr(cols, next == std::string::npos ? std::string::npos : next - cols);
  EXPECT_EQ(interior.find("mirror_index"), std::string::npos) << interior;
  EXPECT_NE(interior.find("x["), std::string::npos) << interior;
  EXPECT_EQ(matches_reference(pattern(stencil5, "H = 8, W = 9")), "");
}

TEST(PartitionLoops, MatchesTheReferenceAtEverySize) {
  // Sizes below the stencil's reach leave no middle loop, or no edge loops on one side.
  for (const char* size : {"H = 1, W = 1", "H = 2, W = 3", "H = 3, W = 2", "H = 5, W = 17"})
    EXPECT_EQ(matches_reference(pattern(kStencil, size)), "") << size;
  const char* kBoundaries = R"(
  params N
  input  x : f32[N, N] in [-1, 1]
  output p : f32[N, N]
  output e : f32[N, N]
  output r : f32[N]
  output s : f32[N, N]
  p[i, j] = pad(x, 0.5)[i - 1, j + 2]
  e[i, j] = edge(x)[N - 1 - i, j - 3]
  r[i] = sum(k in 0..3: pad(x, 0.0)[2 * i + k - 1, i])
  s[i, j] = mirror(x)[i, 3 * j - 4] + edge(x)[i * 2, j]
)";
  for (const char* size : {"N = 1", "N = 2", "N = 4", "N = 11"})
    EXPECT_EQ(matches_reference(pattern(kBoundaries, size)), "") << size;
}

TEST(PartitionLoops, ParallelLoopsSplitWithSerialEdgesVectorLoopsStayWhole) {
  std::string text = with_schedule(kStencil, "H = 6, W = 40",
                                   "parallel(m, i)\n  split(m, j, 16, jo, ji, tail=guard)\n  vectorize(m, ji, 16)");
  auto l = lower_text(text, "partition_loops");
  // i in [0, 0], [1, 4] in parallel, [5, 5]; jo split in each; ji, the vector loop, whole.
  EXPECT_EQ(count(l.body, "for i in [1, +4) parallel"), 1) << l.body;
  EXPECT_EQ(count(l.body, "parallel"), 1) << l.body;
  EXPECT_EQ(count(l.body, "for i"), 3) << l.body;
  EXPECT_EQ(count(l.body, "for jo"), 9) << l.body;
  EXPECT_EQ(count(l.body, "vectorized"), 9) << l.body;
  EXPECT_EQ(matches_reference(text), "");
}

TEST(PartitionLoops, NoBoundaryReadsNoSplit) {
  auto l = lower_text(pattern("  params N\n  input x : f32[N] in [-1, 1]\n  output y : f32[N]\n  y[i] = x[i] * 2.0",
                              "N = 8"),
                      "partition_loops");
  EXPECT_EQ(count(l.body, "for i"), 1) << l.body;
}

}  // namespace
}  // namespace ekb::lower::testing
