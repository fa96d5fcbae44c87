// lower_thread_reductions: a reduction loop bound to threads becomes each thread's part, a
// ThreadAllReduce combining the parts over the block, and the accumulator's earlier value joined
// to the total; the combine's form and its shared slots follow the kernel language.
#include <gtest/gtest.h>

#include "lower_test_util.h"

namespace ekb::lower::testing {
namespace {

// Row sums, a block per row, `threads` threads each summing a strided part of the row.
std::string row_sum(int threads) {
  const std::string t = std::to_string(threads);
  return pattern("  params M, N\n  input x : f32[M, N] in [-1, 1]\n  output y : f32[M]\n  y[i] = sum(k in 0..N: x[i, k])",
                 "M = 6, N = 256") +
         "schedule gpu {\n  split(y, k, " + t + ", ko, ki)\n  reorder(y, i, ki, ko)\n  bind(y, i, block.x)\n"
         "  bind(y, ki, thread.x)\n}\n";
}

std::vector<const Stmt*> all_reduces(const Stmt& body) {
  return find_stmts(body, [](const Stmt& s) { return s.kind == StmtKind::ThreadAllReduce; });
}

// The shared allocations around the kernel's code, outermost first.
std::vector<const Stmt*> shared_slots(const Stmt& kernel) {
  return find_stmts(*kernel.body, [](const Stmt& s) { return s.kind == StmtKind::Allocate && s.scope == MemoryScope::Shared; });
}

TEST(LowerThreadReductions, EachThreadSumsItsPartFromZeroThenTheWarpCombines) {
  auto before = lower_text(row_sum(32), "outline_kernels", cuda_like_options(""));
  EXPECT_TRUE(all_reduces(*before.func.body).empty()) << before.body;

  auto l = lower_text(row_sum(32), "lower_thread_reductions", cuda_like_options(""));
  std::vector<const Stmt*> reduces = all_reduces(*l.func.body);
  ASSERT_EQ(reduces.size(), 1u) << l.body;
  const Stmt& r = *reduces[0];
  EXPECT_EQ(r.gpu_axis, 0);
  EXPECT_EQ(r.form, AllReduceForm::Shuffles);  // 32 threads along x, f32: one warp's shuffles
  ASSERT_EQ(r.combines.size(), 1u);
  const Stmt::Combine& c = r.combines[0];
  EXPECT_EQ(c.op, BinOp::Add);
  EXPECT_EQ(c.type, ScalarType::F32);
  EXPECT_EQ(c.slots, "") << "one warp needs no shared slots";
  EXPECT_TRUE(shared_slots(*kernels_of(l.func)[0]).empty()) << l.body;

  // What the accumulator held is saved, the thread's part starts from 0, and the saved value
  // joins the total after the combine.
  const std::string saved = "ekb_before0_" + c.var;
  std::vector<const Stmt*> lets = find_stmts(*l.func.body, [&](const Stmt& s) { return s.kind == StmtKind::LetStmt && s.name == saved; });
  ASSERT_EQ(lets.size(), 1u) << l.body;
  EXPECT_EQ(to_string(*lets[0]->value), c.var);
  const std::string text = to_string(*lets[0]->body);
  const size_t zero = text.find(c.var + " = 0.0:f32"), loop = text.find("gpu_thread.x"), reduce = text.find("all_reduce.x"),
               join = text.find(c.var + " = (" + c.var + " + " + saved + ")");
  ASSERT_NE(zero, std::string::npos) << text;
  ASSERT_NE(join, std::string::npos) << text;
  EXPECT_LT(zero, loop);
  EXPECT_LT(loop, reduce);
  EXPECT_LT(reduce, join);
}

TEST(LowerThreadReductions, SeveralWarpsCombineTheirTotalsThroughOneSharedSlotEach) {
  auto l = lower_text(row_sum(128), "lower_thread_reductions", cuda_like_options(""));
  std::vector<const Stmt*> reduces = all_reduces(*l.func.body);
  ASSERT_EQ(reduces.size(), 1u) << l.body;
  EXPECT_EQ(reduces[0]->form, AllReduceForm::Shuffles);
  std::vector<const Stmt*> slots = shared_slots(*kernels_of(l.func)[0]);
  ASSERT_EQ(slots.size(), 1u) << l.body;
  EXPECT_EQ(slots[0]->name, reduces[0]->combines[0].slots);
  EXPECT_TRUE(is_int_const(*slots[0]->extent, 4));  // 128 threads, 4 warps
  EXPECT_EQ(kernels_of(l.func)[0]->body.get(), slots[0]) << "declared at the kernel's top";
}

TEST(LowerThreadReductions, WithoutShufflesEverywhereBothFormsAndASlotPerThread) {
  // OpenCL: NVIDIA's compiler alone has shuffles; the tree needs a slot per thread.
  auto cl = lower_text(row_sum(64), "lower_thread_reductions", opencl_like_options(""));
  std::vector<const Stmt*> reduces = all_reduces(*cl.func.body);
  ASSERT_EQ(reduces.size(), 1u) << cl.body;
  EXPECT_EQ(reduces[0]->form, AllReduceForm::ShufflesOrTree);
  std::vector<const Stmt*> slots = shared_slots(*kernels_of(cl.func)[0]);
  ASSERT_EQ(slots.size(), 1u) << cl.body;
  EXPECT_TRUE(is_int_const(*slots[0]->extent, 64));
  // A block narrower than a warp: the tree on every target.
  auto narrow = lower_text(row_sum(16), "lower_thread_reductions", cuda_like_options(""));
  reduces = all_reduces(*narrow.func.body);
  ASSERT_EQ(reduces.size(), 1u) << narrow.body;
  EXPECT_EQ(reduces[0]->form, AllReduceForm::Tree);
}

}  // namespace
}  // namespace ekb::lower::testing
