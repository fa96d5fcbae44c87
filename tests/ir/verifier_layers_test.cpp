// The schedule and memory layers: targets, verbs, argument counts and kinds, stages and the loop
// names each directive may use as earlier directives split, tile, fuse and rfactor them.
#include <gtest/gtest.h>

#include "ir/instance.h"
#include "verify_test_util.h"

namespace ekb::ir {
namespace {

using vtest::at;
using vtest::check;
using vtest::has_error;
using vtest::only_error;

// C's pure definition has loops i, j and the reduction loop k; its update 0 has i and the free j.
const std::string kMatmul = R"(pattern linalg.mm {
  level operator
  source "test"
  params N
  input  A : f32[N, N] in [-1, 1]
  input  B : f32[N, N] in [-1, 1]
  temp   P : f32[N, N]
  output C : f32[N, N]
  P[i, j] = A[i, j] * 2.0
  C[i, j] = sum(k in 0..N: P[i, k] * B[k, j])
  for i in 0..N: C[i, j] = C[i, j] + 1.0
}
workload w { N = 64 }
)";

std::string with(const std::string& layers) { return kMatmul + layers; }

TEST(Layers, ValidScheduleAndMemory) {
  std::string src = with(R"(schedule cpu {
  split(C, i, 32, io, ii)
  split(C, j, 8, jo, ji, tail=shift_inwards)
  reorder(C, io, jo, k, ii, ji)
  fuse(C, io, jo, f)
  parallel(C, f)
  vectorize(C, ji, 8)
  unroll(C, ii, 4)
  compute_at(P, C, f)
  rfactor(C, k, kf)
  parallel(kf, kf)
  parallel(C.update(0), i)
  vectorize(C.update(0), j, 4)
}
memory cpu {
  cache_read(A, C, f, tile, As)
  cache_write(C, f, local, Cl)
  layout(B, pack(1, 8))
  layout(A, order(1, 0))
  layout(As, order(1, 0))
  align(Cl, 64)
  nontemporal(C)
  prefetch(C, f, B, 256, lines=4)
}
schedule gpu {
  tile(C, i, j, 16, 16, io, jo, ii, ji)
  bind(C, io, block.x)
  bind(C, jo, block.y)
  bind(C, ii, thread.x)
  compute_inline(P)
  compute_root(P)
}
memory gpu {
  cache_read(B, C, io, shared, Bs)
  double_buffer(Bs)
}
)");
  auto c = check(src);
  EXPECT_TRUE(c.ok) << c.text;
}

TEST(Layers, TargetsAndVerbs) {
  std::string src = with("schedule tpu {\n  splt(C, i, 32, io, ii)\n  cache_read(A, C, i, shared, As)\n}\n"
                         "memory {\n  split(C, i, 32, io, ii)\n}\n");
  auto c = check(src);
  EXPECT_TRUE(has_error(c, at(src, "schedule tpu"), "unknown target 'tpu' for the schedule block"));
  EXPECT_TRUE(has_error(c, at(src, "splt"), "unknown directive 'splt'", "did you mean 'split'?"));
  EXPECT_TRUE(has_error(c, at(src, "cache_read"), "'cache_read' is a memory directive, not a schedule one"));
  EXPECT_TRUE(has_error(c, at(src, "split(C"), "'split' is a schedule directive, not a memory one"));
  EXPECT_EQ(c.items.size(), 4u) << c.text;
}

struct LayerCase {
  std::string block;   // a whole schedule/memory block
  std::string needle;  // where the error is (first occurrence after the pattern)
  std::string message;
  std::string hint;
};

// Each case's block alone after kMatmul gives exactly its error, where its needle is.
void expect_only_errors(const std::vector<LayerCase>& cases) {
  for (const auto& lc : cases) {
    std::string src = with(lc.block + "\n");
    // Needles are searched after the pattern so that they do not match its text.
    SourceLoc loc = at(src, lc.needle, 0, kMatmul.size());
    ASSERT_NE(loc.line, 0) << lc.needle;
    EXPECT_TRUE(only_error(check(src), loc, lc.message, lc.hint)) << lc.block;
  }
}

TEST(Layers, DirectiveErrors) {
  const std::vector<LayerCase> cases = {
      {"schedule cpu {\n  split(C, i, 32, io)\n}", "split", "'split' takes 5 arguments, found 4", "split(stage, loop"},
      {"schedule cpu {\n  split(C, i, 32, io, ii)\n  parallel(C, i)\n}", "i)\n}",
       "loop 'i' of stage 'C' was split into io, ii by the directive at line 15", ""},
      {"schedule cpu {\n  fuse(C, i, j, f)\n  vectorize(C, j, 4)\n}", "j, 4",
       "loop 'j' of stage 'C' was fused into f by the directive at line 15", ""},
      {"schedule cpu {\n  tile(C, i, j, 8, 8, io, jo, ii, ji)\n  unroll(C, j, 2)\n}", "j, 2",
       "loop 'j' of stage 'C' was tiled into jo, ji by the directive at line 15", ""},
      {"schedule cpu {\n  rfactor(C, k, kf)\n  unroll(C, k, 2)\n}", "k, 2",
       "loop 'k' of stage 'C' was replaced by kf (rfactor) by the directive at line 15", ""},
      {"schedule cpu {\n  parallel(C, qq)\n}", "qq)", "stage 'C' has no loop 'qq'", "its loops are i, j, k"},
      {"schedule cpu {\n  parallel(C.update(0), k)\n}", "k)", "stage 'C.update(0)' has no loop 'k'", ""},
      {"schedule cpu {\n  parallel(Cc, i)\n}", "Cc", "unknown stage 'Cc'", "did you mean 'C'?"},
      {"schedule cpu {\n  parallel(A, i)\n}", "A, i", "'A' is an input, not a stage", ""},
      {"schedule cpu {\n  parallel(C.update(1), i)\n}", "C.update", "'C' has 1 update; there is no update(1)", ""},
      {"schedule cpu {\n  parallel(P.update(0), i)\n}", "P.update", "'P' has no updates; there is no update(0)", ""},
      {"schedule cpu {\n  parallel(C.update, i)\n}", "C.update", "expected a stage, found 'C.update'", "C.update(0)"},
      {"schedule gpu {\n  bind(C, i, block.w)\n}", "block.w", "unknown bind target 'block.w'", "did you mean 'block.x'?"},
      {"schedule cpu {\n  split(C, i, 0, io, ii)\n}", "0, io", "the factor of 'split' must be a positive integer, found '0'", ""},
      {"schedule cpu {\n  vectorize(C, i, w)\n}", "w)", "the factor of 'vectorize' must be a positive integer, found 'w'", ""},
      {"schedule cpu {\n  split(C, i, 8, io, ii, tail=wrap)\n}", "tail", "unknown tail strategy 'wrap'", "guard"},
      {"schedule cpu {\n  parallel(C, i, tail=guard)\n}", "tail", "'parallel' has no argument 'tail'", ""},
      {"schedule cpu {\n  split(C, i, 8, j, ii)\n}", "j, ii", "'j' already names a loop of stage 'C'", ""},
      {"schedule cpu {\n  reorder(C, i, j, i)\n}", "i)", "loop 'i' is listed twice", ""},
      {"schedule cpu {\n  reorder(C, i)\n}", "reorder", "'reorder' takes a stage and at least two loops", ""},
      {"schedule cpu {\n  compute_inline(C)\n}", "C)", "output 'C' cannot be inlined", ""},
      {"schedule cpu {\n  compute_at(C, C, i)\n}", "C, i", "'C' cannot be computed at its own loops", ""},
      {"schedule cpu {\n  compute_root(C.update(0))\n}", "C.update", "expected a tensor, found 'C.update(...)'", ""},
      {"memory cpu {\n  cache_read(A, C, i, sharedd, As)\n}", "sharedd", "unknown memory scope 'sharedd'",
       "did you mean 'shared'?"},
      {"memory cpu {\n  cache_read(A, C, i, shared, As)\n  align(Ass, 64)\n}", "Ass", "unknown tensor or buffer 'Ass'",
       "did you mean 'As'?"},
      {"memory cpu {\n  cache_write(C, i, local, A)\n}", "A)", "'A' is already declared", ""},
      {"memory cpu {\n  layout(B, pack(2, 8))\n}", "2, 8", "dimension '2' is out of range for a tensor of rank 2", ""},
      {"memory cpu {\n  layout(B, order(0, 0))\n}", "0))", "dimension 0 is listed twice in order(...)", ""},
      {"memory cpu {\n  layout(B, order(0))\n}", "order", "order(...) must list all 2 dimensions, found 1", ""},
      {"memory cpu {\n  layout(B, swizzle(0))\n}", "swizzle", "expected pack(dim, factor) or order(dims...)", ""},
      {"memory cpu {\n  align(A, 48)\n}", "48", "the alignment must be a power of two, found 48", ""},
      // A cache's copy nests are a stage of its own, with one loop per dimension.
      {"memory cpu {\n  cache_write(C, i, local, Cl)\n}\nschedule cpu {\n  vectorize(Cl, c2, 16)\n}", "c2",
       "stage 'Cl' has no loop 'c2'", "did you mean 'c0'?"},
      // Loops created by one target's schedule are not another target's.
      {"schedule cpu {\n  split(C, i, 32, io, ii)\n}\nmemory gpu {\n  cache_write(C, io, local, Cl)\n}", "io, local",
       "stage 'C' has no loop 'io'", ""},
  };
  expect_only_errors(cases);
}

// A `cpu` or `gpu` block holds only directives with a meaning on its target (the directive table's
// targets); a block without a target may hold any, and lowering refuses them per target.
TEST(Layers, DirectivesWithoutAMeaningOnTheBlocksTargetAreErrors) {
  const std::vector<LayerCase> cases = {
      {"schedule cpu {\n  bind(C, i, block.x)\n}", "bind", "bind maps loops to GPU blocks and threads; it has no meaning on cpu",
       "schedule gpu"},
      {"schedule gpu {\n  parallel(C, i)\n}", "parallel", "parallel runs a loop on cpu threads; it has no meaning on gpu",
       "bind the loop"},
      {"schedule gpu {\n  pipeline(C.update(0), i, C, i)\n}", "pipeline", "it has no meaning on gpu", ""},
      {"memory cpu {\n  cache_read(A, C, i, tile, As)\n  double_buffer(As)\n}", "double_buffer",
       "double_buffer applies to gpu shared memory", ""},
      {"memory gpu {\n  nontemporal(C)\n}", "nontemporal", "nontemporal applies to cpu stores", ""},
      {"memory gpu {\n  prefetch(C, i, A, 64)\n}", "prefetch", "prefetch applies to cpu loops", ""},
  };
  expect_only_errors(cases);
  auto c = check(with("schedule {\n  parallel(C, i)\n  bind(C, j, thread.x)\n}\nmemory {\n  nontemporal(C)\n}\n"));
  EXPECT_TRUE(c.ok) << c.text;
}

// Arguments are checked by their kind in the table, for every directive alike.
TEST(Layers, ArgumentsAreCheckedByKind) {
  const std::vector<LayerCase> cases = {
      {"memory cpu {\n  prefetch(C, q, A, 64)\n}", "q,", "stage 'C' has no loop 'q'", ""},
      {"memory cpu {\n  prefetch(C, i, A, 64, lines=65)\n}", "lines", "the lines of a prefetch must be a whole number",
       ""},
      {"memory cpu {\n  prefetch(C, i, A, 64, tail=guard)\n}", "tail", "'prefetch' has no argument 'tail'",
       "lines=N"},
      {"schedule cpu {\n  tile(C, i, j, 8, 0, io, jo, ii, ji)\n}", "0, io", "the y factor of 'tile' must be a positive integer",
       ""},
      {"schedule cpu {\n  tile(C, i, i, 8, 8, io, jo, ii, ji)\n}", "i, 8", "loop 'i' is listed twice", ""},
      {"schedule cpu {\n  compute_inline(P)\n  compute_inline(C)\n}", "C)", "output 'C' cannot be inlined", ""},
      {"schedule cpu {\n  rfactor(C, k, P)\n}", "P)", "'P' already names a stage", ""},
      {"schedule cpu {\n  reorder(C, i)\n}", "reorder", "'reorder' takes a stage and at least two loops, found 2 arguments",
       "reorder(stage, loop, ...)"},
      {"schedule cpu {\n  compute_root(P, C)\n}", "compute_root", "'compute_root' takes 1 argument, found 2",
       "compute_root(producer)"},
  };
  expect_only_errors(cases);
}

// The copy nests of a cache form a stage named after it (loops c0, c1, ...) that later schedule
// blocks may vectorize and unroll, like a GEMM's register tile (examples/schedules-cpu/linalg.gemm).
TEST(Layers, CacheCopyNestsAreAStage) {
  std::string src = with("memory cpu {\n  cache_write(C, i, local, Cl)\n  cache_read(B, C, i, tile, Bt)\n}\n"
                         "schedule cpu {\n  vectorize(Cl, c1, 16)\n  unroll(Cl, c0, 4)\n  split(Bt, c0, 8, bo, bi)\n}\n");
  auto c = check(src);
  EXPECT_TRUE(c.ok) << c.text;
}

TEST(Layers, MemoryUsesTheSameTargetsScheduleLoops) {
  std::string src = with("schedule cpu {\n  split(C, i, 32, io, ii)\n}\nmemory cpu {\n  cache_write(C, io, local, Cl)\n"
                         "  cache_read(A, C, ii, tile, As)\n  align(As, 64)\n}\nschedule cpu {\n  compute_at(As, C, io)\n}\n");
  auto c = check(src);
  EXPECT_TRUE(c.ok) << c.text;
}

}  // namespace
}  // namespace ekb::ir
