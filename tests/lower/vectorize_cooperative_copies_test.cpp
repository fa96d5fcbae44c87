// vectorize_cooperative_copies: each cooperative copy into shared memory is named, and takes four
// floats per load where its rows are runs of 4 aligned floats.
#include <gtest/gtest.h>

#include "lower_test_util.h"

namespace ekb::lower::testing {
namespace {

// A block per row of y = 2x, the row of x first copied into shared memory by the block's threads.
std::string scaled_rows(int64_t columns) {
  return pattern("  params M, N\n  input x : f32[M, N] in [-1, 1]\n  output y : f32[M, N]\n  y[i, j] = 2.0 * x[i, j]",
                 "M = 6, N = " + std::to_string(columns)) +
         "schedule gpu {\n  bind(y, i, block.x)\n  bind(y, j, thread.x)\n}\nmemory gpu {\n  cache_read(x, y, i, shared, xs)\n}\n";
}

// The outermost loops of the cooperative copy nests.
std::vector<const Stmt*> copies(const Func& f) {
  return find_stmts(*f.body, [](const Stmt& s) {
    return s.kind == StmtKind::For && s.for_kind == ForKind::GpuCooperative && !s.cooperative.name.empty();
  });
}

TEST(VectorizeCooperativeCopies, RowsOfAlignedFloatsTakeFourPerLoad) {
  auto before = lower_text(scaled_rows(64), "lower_thread_reductions", cuda_like_options(""));
  EXPECT_TRUE(copies(before.func).empty()) << before.body;

  auto l = lower_text(scaled_rows(64), "vectorize_cooperative_copies", cuda_like_options(""));
  std::vector<const Stmt*> found = copies(l.func);
  ASSERT_EQ(found.size(), 1u) << l.body;
  EXPECT_EQ(found[0]->cooperative.name, "ekb_coop0");
  EXPECT_EQ(found[0]->cooperative.lanes, 4);  // x[i * 64 + j]: rows of 64 floats, 16-byte aligned
  EXPECT_TRUE(found[0]->cooperative.vector_store);
  EXPECT_TRUE(found[0]->cooperative.lane_indices.empty());
}

TEST(VectorizeCooperativeCopies, RowsOfAnOddLengthAreCopiedFloatByFloat) {
  auto l = lower_text(scaled_rows(66), "vectorize_cooperative_copies", cuda_like_options(""));
  std::vector<const Stmt*> found = copies(l.func);
  ASSERT_EQ(found.size(), 1u) << l.body;
  EXPECT_EQ(found[0]->cooperative.lanes, 1);
  EXPECT_FALSE(found[0]->cooperative.vector_store);
}

}  // namespace
}  // namespace ekb::lower::testing
