// outline_kernels: a gpu function becomes kernels launched in program order, each with its launch
// and the part of the context it uses.
#include <gtest/gtest.h>

#include "lower_test_util.h"

namespace ekb::lower::testing {
namespace {

// Row sums, a block per row, its 32 threads each summing a strided part of the row.
const char* kRowSum = "  params M, N\n  input x : f32[M, N] in [-1, 1]\n  output y : f32[M]\n  y[i] = sum(k in 0..N: x[i, k])";
const char* kRowSumSchedule =
    "schedule gpu {\n  split(y, k, 32, ko, ki)\n  reorder(y, i, ki, ko)\n  bind(y, i, block.x)\n  bind(y, ki, thread.x)\n}\n";

TEST(OutlineKernels, EachStageIsAKernelWithTheContextItUses) {
  auto l = lower_text(pattern(kFourStages, "M = 3, N = 4"), "outline_kernels", cuda_like_options(""));
  std::vector<const Stmt*> kernels = kernels_of(l.func);
  ASSERT_EQ(kernels.size(), 4u) << l.body;
  // The body is nothing but the kernels, named in launch order.
  ASSERT_EQ(l.func.body->kind, StmtKind::Block);
  EXPECT_EQ(l.func.body->stmts.size(), 4u);
  for (size_t i = 0; i < kernels.size(); ++i) EXPECT_EQ(kernels[i]->name, "ekb_kernel_" + std::to_string(i));

  const Launch& t = kernels[0]->launch;
  EXPECT_EQ(t.kind, LaunchKind::GridStride);
  EXPECT_EQ(t.loops, (std::vector<std::string>{"j"}));
  ASSERT_EQ(t.extents.size(), 1u);
  EXPECT_TRUE(is_int_const(*t.extents[0], 4));
  EXPECT_EQ(t.geometry.block[0], 256);  // GpuLowerOptions::threads_per_block
  EXPECT_EQ(t.max_blocks, 65535);
  EXPECT_EQ(kernels[1]->launch.loops, (std::vector<std::string>{"i", "j_1"}));
  EXPECT_EQ(kernels[2]->launch.kind, LaunchKind::Single);  // the ordered update
  EXPECT_EQ(kernels[3]->launch.loops, (std::vector<std::string>{"i_2"}));

  // The scratch temp t where it is written and read, nowhere else.
  auto allocates_t = [](const Stmt* k) {
    return !find_stmts(*k->body, [](const Stmt& s) { return s.kind == StmtKind::Allocate && s.name == "t"; }).empty();
  };
  EXPECT_TRUE(allocates_t(kernels[0])) << l.body;
  EXPECT_TRUE(allocates_t(kernels[1])) << l.body;
  EXPECT_FALSE(allocates_t(kernels[2])) << l.body;
  EXPECT_FALSE(allocates_t(kernels[3])) << l.body;
  EXPECT_EQ(kernels[0]->body->kind, StmtKind::Allocate);
}

TEST(OutlineKernels, ConsecutiveSequentialStagesShareOneSingleThreadKernel) {
  auto l = lower_text(pattern("  params M, N\n  input x : f32[M, N]\n  output y : f32[M, N]\n  y[i, j] = x[i, j]\n"
                              "  for i in 1..M: y[i, j] = y[i - 1, j] + y[i, j]\n"
                              "  for i in 1..M: y[i, j] = y[i - 1, j] * y[i, j]",
                              "M = 3, N = 4"),
                      "outline_kernels", cuda_like_options(""));
  std::vector<const Stmt*> kernels = kernels_of(l.func);
  ASSERT_EQ(kernels.size(), 2u) << l.body;
  EXPECT_EQ(kernels[0]->launch.kind, LaunchKind::GridStride);
  EXPECT_EQ(kernels[1]->launch.kind, LaunchKind::Single);
  EXPECT_EQ(find_stmts(*kernels[1]->body, [](const Stmt& s) { return s.kind == StmtKind::For; }).size(), 4u) << l.body;
}

TEST(OutlineKernels, ABoundStageIsOneKernelOfItsGeometryWhoseFirstThreadStoresTheTotal) {
  auto l = lower_text(pattern(kRowSum, "M = 6, N = 256") + kRowSumSchedule, "outline_kernels", cuda_like_options(""));
  std::vector<const Stmt*> kernels = kernels_of(l.func);
  ASSERT_EQ(kernels.size(), 1u) << l.body;
  const Launch& g = kernels[0]->launch;
  EXPECT_EQ(g.kind, LaunchKind::Grid);
  EXPECT_EQ(g.geometry.grid, (std::array<int64_t, 3>{6, 1, 1}));
  EXPECT_EQ(g.geometry.block, (std::array<int64_t, 3>{32, 1, 1}));
  // The row's total is the same in every thread after the cooperative reduction: the block's
  // first thread stores it.
  std::vector<const Stmt*> guarded = find_stmts(*kernels[0]->body, [](const Stmt& s) {
    return s.kind == StmtKind::IfThenElse && s.body->kind == StmtKind::Store && s.body->name == "y";
  });
  ASSERT_EQ(guarded.size(), 1u) << l.body;
  EXPECT_EQ(to_string(*guarded[0]->value), "(thread_rank() == 0)");
}

TEST(OutlineKernels, SharedMemoryIsDeclaredAtTheTopOfItsKernel) {
  auto l = lower_text(pattern(kRowSum, "M = 6, N = 256") + kRowSumSchedule + "memory gpu {\n  cache_read(x, y, i, shared, xs)\n}\n",
                      "outline_kernels", cuda_like_options(""));
  std::vector<const Stmt*> kernels = kernels_of(l.func);
  ASSERT_EQ(kernels.size(), 1u) << l.body;
  const Stmt& body = *kernels[0]->body;
  ASSERT_EQ(body.kind, StmtKind::Allocate) << l.body;
  EXPECT_EQ(body.name, "xs");
  EXPECT_EQ(body.scope, MemoryScope::Shared);
  EXPECT_EQ(find_stmts(*body.body, [](const Stmt& s) { return s.kind == StmtKind::Allocate; }).size(), 0u) << l.body;
}

}  // namespace
}  // namespace ekb::lower::testing
