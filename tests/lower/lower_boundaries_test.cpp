// lower_boundaries: pad as a guarded load, edge as clamped indices, mirror as mirror_index; and,
// after simplify, only the checks the loop ranges do not settle.
#include "lower/lower_boundaries.h"

#include <gtest/gtest.h>

#include "lower_test_util.h"

namespace ekb::lower::testing {
namespace {

const char* kProgram = R"(
  params N
  input  x : f32[N, N]
  output p : f32[N, N]
  output e : f32[N, N]
  output m : f32[N, N]
  p[i, j] = pad(x, 0.0)[i - 1, j]
  e[i, j] = edge(x)[i, j + 1]
  m[i, j] = mirror(x)[i, j - 2]
)";

TEST(LowerBoundaries, ReferenceIndexMath) {
  auto l = lower_text(pattern(kProgram, "N = 4"), "lower_boundaries");
  EXPECT_NE(l.body.find("p[i, j] = select((((0 <= (i - 1)) && ((i - 1) < 4)) && ((0 <= j) && (j < 4))), "
                        "x[(i - 1), j], 0.0:f32)"),
            std::string::npos)
      << l.body;
  EXPECT_NE(l.body.find("e[i_1, j_1] = x[min(max(i_1, 0), 3), min(max((j_1 + 1), 0), 3)]"), std::string::npos)
      << l.body;
  EXPECT_NE(l.body.find("m[i_2, j_2] = x[mirror_index(i_2, 4), mirror_index((j_2 - 2), 4)]"),
            std::string::npos)
      << l.body;
}

TEST(LowerBoundaries, SimplifyKeepsOnlyTheChecksThatCanFail) {
  // Without partition_loops, which would move the checks that can fail into loops of their own.
  LowerOptions whole;
  whole.partition_loops = false;
  auto l = lower_text(pattern(kProgram, "N = 4"), "", whole);
  EXPECT_NE(l.body.find("p[((i * 4) + j)] = select((0 <= (i + -1)), x[(((i + -1) * 4) + j)], 0.0:f32)"),
            std::string::npos)
      << l.body;
  EXPECT_NE(l.body.find("e[((i_1 * 4) + j_1)] = x[((i_1 * 4) + min((j_1 + 1), 3))]"), std::string::npos)
      << l.body;
  EXPECT_NE(l.body.find("m[((i_2 * 4) + j_2)] = x[((i_2 * 4) + mirror_index((j_2 + -2), 4))]"),
            std::string::npos)
      << l.body;
}

}  // namespace
}  // namespace ekb::lower::testing
