// The memory layer alone on cpu: cache_read and cache_write at a loop level, layout (pack, order)
// of inputs and temps, align, and the directives that have no meaning on cpu.
#include <gtest/gtest.h>

#include "lower_test_util.h"

namespace ekb::lower::testing {
namespace {

std::string with_layers(const std::string& body, const std::string& workload, const std::string& schedule,
                        const std::string& memory) {
  return pattern(body, workload) + "schedule cpu {\n" + schedule + "\n}\nmemory cpu {\n" + memory + "\n}\n";
}

const char* kGemm =
    "  params M, N, K\n  input A : f32[M, K] in [-1, 1]\n  input B : f32[K, N] in [-1, 1]\n  output C : f32[M, N]\n"
    "  C[i, j] = sum(k in 0..K: A[i, k] * B[k, j])";
const char* kGemmSize = "M = 10, N = 21, K = 7";
const char* kGemmTiles = "tile(C, i, j, 4, 8, io, jo, ii, ji)\n  reorder(C, io, jo, k, ii, ji)";

// The ScheduleError of lowering `text` for a gpu target ("" when it lowers).
std::string gpu_schedule_error(const std::string& text) {
  auto l = ir::testing::load(text);
  if (!l.inst) return "verifier: " + l.diags;
  LowerOptions o;
  o.target = ir::Target::Cuda;
  try {
    lower(*l.inst, o);
  } catch (const ScheduleError& e) {
    return e.what();
  }
  return "";
}

const char* kStencil =
    "  params H, W\n  input src : f32[H + 2, W + 2] in [-1, 1]\n  output dst : f32[H, W]\n"
    "  dst[y, x] = src[y, x] + src[y + 1, x + 1] + src[y + 2, x + 2]";

TEST(MemoryCacheWrite, GemmAccumulatorTileInRegisters) {
  std::string text = with_layers(kGemm, kGemmSize, kGemmTiles, "cache_write(C, jo, local, Cl)");
  std::string lir = scheduled_lir(text);
  EXPECT_NE(lir.find("allocate Cl: f32[32] in local"), std::string::npos) << lir;
  // The moved reduction initializes C in a nest of its own, whose tile starts with that store, so
  // it is not loaded first; the accumulating nest's tile is.
  size_t init = lir.find("allocate Cl"), accumulate = lir.find("allocate Cl", init + 1);
  ASSERT_NE(accumulate, std::string::npos) << lir;
  EXPECT_EQ(lir.substr(init, accumulate - init).find("Cl_in"), std::string::npos) << lir;
  EXPECT_NE(lir.find("Cl_in", accumulate), std::string::npos) << lir;
  EXPECT_EQ(matches_reference(text), "");
}

TEST(MemoryCacheWrite, TileThatIsReadFirstIsLoadedFirst) {
  // The recurrence reads the row before the one it writes: the cache must start with C's values.
  std::string text = pattern(
                         "  params N, T\n  input x : f32[T, N] in [-1, 1]\n  output y : f32[T, N]\n"
                         "  y[t, n] = x[t, n]\n  for t in 1..T: y[t, n] = 0.5 * y[t - 1, n] + x[t, n]",
                         "N = 12, T = 9") +
                     "memory cpu {\n  cache_write(y.update(0), t, tile, yl)\n}\n";
  EXPECT_NE(scheduled_lir(text).find("yl_in"), std::string::npos) << scheduled_lir(text);
  EXPECT_EQ(matches_reference(text), "");
}

// The nest under l1 stores every other element of its box (y[2 * l0 + l1]): the elements between
// belong to other iterations of l1, so the cache must be loaded first or its write-back would
// overwrite them (found by tests/codegen/schedule_property_test.cpp).
TEST(MemoryCacheWrite, StridedStoresAreNotAnInitialization) {
  std::string text = with_layers("  params L\n  input x : f32[L] in [-1, 1]\n  output y : f32[L]\n  y[i] = 2.0 * x[i]",
                                 "L = 12", "split(y, i, 2, l0, l1, tail=round_up)\n  reorder(y, l1, l0)",
                                 "cache_write(y, l1, global, yl)");
  std::string lir = scheduled_lir(text);
  EXPECT_NE(lir.find("yl_in"), std::string::npos) << lir;
  EXPECT_EQ(matches_reference(text), "");
}

TEST(MemoryCacheRead, StencilRowsCopiedPerTile) {
  std::string text = with_layers(kStencil, "H = 9, W = 14", "split(dst, y, 4, yo, yi)\n  parallel(dst, yo)",
                                 "cache_read(src, dst, yo, tile, srct)");
  std::string lir = scheduled_lir(text);
  // 4 rows read 6 rows of src, all 16 columns.
  EXPECT_NE(lir.find("allocate srct: f32[96]"), std::string::npos) << lir;
  EXPECT_EQ(matches_reference(text), "");
}

TEST(MemoryCacheRead, GemmPanelOfB) {
  EXPECT_EQ(matches_reference(with_layers(kGemm, kGemmSize, kGemmTiles,
                                          "cache_read(B, C, jo, tile, Bt)\n  cache_write(C, jo, local, Cl)")),
            "");
}

TEST(MemoryCache, ScopesAndStaleCopiesAreErrors) {
  std::string e = schedule_error(with_layers(kGemm, kGemmSize, kGemmTiles, "cache_read(A, C, jo, shared, As)"));
  EXPECT_NE(e.find("'cache_read(A, C, jo, shared, As)': scope 'shared' is GPU shared memory"), std::string::npos) << e;
  EXPECT_NE(e.find("hint: on cpu use tile"), std::string::npos) << e;
  e = schedule_error(with_layers(kGemm, "M = 10, N = 200, K = 7", kGemmTiles, "cache_write(C, io, local, Cl)"));
  EXPECT_NE(e.find("more than registers hold"), std::string::npos) << e;
  e = schedule_error(pattern("  params N\n  input x : f32[N] in [-1, 1]\n  output y : f32[N]\n  temp t : f32[N]\n"
                             "  t[i] = x[i]\n  for s in 0..2: t[i] = t[i] + 1.0\n  y[i] = t[i]",
                             "N = 8") +
                     "memory cpu {\n  cache_read(t, t.update(0), s, tile, tc)\n}\n");
  EXPECT_NE(e.find("go stale"), std::string::npos) << e;
}

TEST(MemoryLayout, PackedInputIsPackedAtEntry) {
  std::string text = with_layers(kGemm, kGemmSize, kGemmTiles, "layout(B, pack(1, 8))");
  std::string lir = scheduled_lir(text);
  EXPECT_NE(lir.find("B_packed"), std::string::npos) << lir;
  EXPECT_EQ(matches_reference(text), "");
}

TEST(MemoryLayout, TempStorageReordered) {
  EXPECT_EQ(matches_reference(with_layers(
                "  params H, W\n  input x : f32[H, W] in [-1, 1]\n  output y : f32[H, W]\n  temp t : f32[H, W]\n"
                "  t[a, b] = x[a, b] * 3.0\n  y[a, b] = t[a, b] + mirror(t)[a + 1, b - 2]",
                "H = 5, W = 7", "parallel(y, a)", "layout(t, order(1, 0))\n  layout(t, pack(0, 4))")),
            "");
}

TEST(MemoryLayout, OutputKeepsTheAbiLayout) {
  std::string e = schedule_error(with_layers(kGemm, kGemmSize, kGemmTiles, "layout(C, order(1, 0))"));
  EXPECT_NE(e.find("is an output, which keeps the row-major layout"), std::string::npos) << e;
}

TEST(MemoryAlign, TempsAlignedAndArgumentsUpToTheHarnessGuarantee) {
  std::string text = with_layers(kGemm, kGemmSize, kGemmTiles,
                                 "cache_read(B, C, jo, tile, Bt)\n  align(Bt, 128)\n  align(A, 64)");
  EXPECT_NE(scheduled_lir(text).find("aligned 128"), std::string::npos) << scheduled_lir(text);
  auto l = ir::testing::load(text);
  ASSERT_TRUE(l.inst);
  std::string source = codegen::emit_c_source(lower::lower(*l.inst));
  EXPECT_NE(source.find("__builtin_assume_aligned(A, 64)"), std::string::npos) << source;
  EXPECT_NE(source.find("aligned(128)"), std::string::npos) << source;
  EXPECT_EQ(matches_reference(text), "");
  std::string e = schedule_error(with_layers(kGemm, kGemmSize, kGemmTiles, "align(A, 128)"));
  EXPECT_NE(e.find("the harness aligns tensors to 64 bytes"), std::string::npos) << e;
}

TEST(MemoryLayer, DoubleBufferIsForGpuSharedMemory) {
  std::string e = schedule_error(with_layers(kGemm, kGemmSize, kGemmTiles,
                                             "cache_read(B, C, jo, tile, Bt)\n  double_buffer(Bt)"));
  EXPECT_NE(e.find("double_buffer applies to gpu shared memory"), std::string::npos) << e;
}

// nontemporal(y): the vectorized stores of an output become streaming stores, with a fence before
// the kernel returns; rows of 20 floats start off a 64-byte boundary (all but the first), where
// the helper falls back to a plain store, and the results still match.
TEST(MemoryNontemporal, OutputVectorStoresStreamAndStayCorrectWhereUnaligned) {
  const char* body = "  params H, W\n  input x : f32[H, W] in [-1, 1]\n  output y : f32[H, W]\n  y[i, j] = 2.0 * x[i, j]";
  const std::string schedule = "split(y, j, 16, jo, ji, tail=peel)\n  vectorize(y, ji, 16)";
  std::string text = with_layers(body, "H = 4, W = 20", schedule, "nontemporal(y)");
  auto l = ir::testing::load(text);
  ASSERT_TRUE(l.inst) << l.diags;
  std::string source = codegen::emit_c_source(lower::lower(*l.inst));
  EXPECT_NE(source.find("ekb_stream_f32x16(&y["), std::string::npos) << source;
  EXPECT_NE(source.find("__builtin_nontemporal_store"), std::string::npos) << source;
  EXPECT_NE(source.find("__builtin_ia32_sfence();"), std::string::npos) << source;
  EXPECT_EQ(matches_reference(text), "");
  // Without the directive: plain stores, no fence.
  std::string plain =
      codegen::emit_c_source(lower::lower(*ir::testing::load(with_layers(body, "H = 4, W = 20", schedule, "")).inst));
  EXPECT_EQ(plain.find("ekb_stream_"), std::string::npos) << plain;
  EXPECT_EQ(plain.find("sfence"), std::string::npos) << plain;

  std::string e = schedule_error(with_layers(body, "H = 4, W = 20", schedule, "nontemporal(x)"));
  EXPECT_NE(e.find("nontemporal applies to outputs, and 'x' is an input"), std::string::npos) << e;
  e = gpu_schedule_error(pattern(body, "H = 4, W = 20") + "memory gpu {\n  nontemporal(y)\n}\n");
  EXPECT_NE(e.find("nontemporal applies to cpu stores"), std::string::npos) << e;
}

// prefetch(STAGE, loop, T, distance): each iteration of the loop starts with a prefetch of the
// element of T its body reads first (inner loops at their first iteration), `distance` elements
// on; the results are unchanged; a tensor the loop does not read, and gpu, are refused.
TEST(MemoryPrefetch, EachIterationPrefetchesItsReadsAhead) {
  const char* body = "  params H, W\n  input x : f32[H, W] in [-1, 1]\n  output y : f32[H, W]\n  y[i, j] = 2.0 * x[i, j]";
  const std::string schedule = "vectorize(y, j, 16)";
  std::string text = with_layers(body, "H = 5, W = 64", schedule, "prefetch(y, j, x, 128)");
  auto l = ir::testing::load(text);
  ASSERT_TRUE(l.inst) << l.diags;
  std::string source = codegen::emit_c_source(lower::lower(*l.inst));
  // x[i * 64 + j * 16 + lane] at lane 0, 128 floats (512 bytes) on: one prefetch per iteration of j.
  size_t at = source.find("__builtin_prefetch((const void*)((uintptr_t)&x[");
  ASSERT_NE(at, std::string::npos) << source;
  EXPECT_NE(source.find("+ 512u), 0, 3);", at), std::string::npos) << source;
  EXPECT_LT(at, source.find("16 lanes at once")) << "the prefetch opens the iteration, before the vector body\n" << source;
  EXPECT_EQ(matches_reference(text), "");

  std::string e = schedule_error(with_layers(body, "H = 5, W = 64", schedule, "prefetch(y, j, y, 128)"));
  EXPECT_NE(e.find("stage 'y' reads no 'y' under loop 'j'"), std::string::npos) << e;
  e = schedule_error(with_layers(body, "H = 5, W = 64", schedule, "prefetch(y, k, x, 128)"));
  EXPECT_NE(e.find("'k'"), std::string::npos) << e;
  e = gpu_schedule_error(pattern(body, "H = 5, W = 64") + "memory gpu {\n  prefetch(y, j, x, 128)\n}\n");
  EXPECT_NE(e.find("prefetch applies to cpu loops"), std::string::npos) << e;
}

// An unrolled body reads several vectors: each of their cache lines is prefetched; an inner loop
// over a whole row keeps the one prefetch of its first element.
TEST(MemoryPrefetch, EveryLineOfAnUnrolledBodyAndOneForALongInnerLoop) {
  const char* body = "  params H, W\n  input x : f32[H, W] in [-1, 1]\n  output y : f32[H, W]\n  y[i, j] = 2.0 * x[i, j]";
  auto prefetches = [](const std::string& text) {
    auto l = ir::testing::load(text);
    EXPECT_TRUE(l.inst) << l.diags;
    std::string source = codegen::emit_c_source(lower::lower(*l.inst));
    std::vector<std::string> offsets;
    for (size_t at = source.find("__builtin_prefetch"); at != std::string::npos;
         at = source.find("__builtin_prefetch", at + 1)) {
      size_t plus = source.find("] + ", at), end = source.find("u)", plus);
      offsets.push_back(source.substr(plus + 4, end - plus - 4));
    }
    return offsets;
  };
  // Two vectors of 16 per iteration of j: the lines at +512 and +576 bytes.
  std::string unrolled = with_layers(body, "H = 5, W = 64", "vectorize(y, j, 16)\n  unroll(y, j, 2)", "prefetch(y, j, x, 128)");
  EXPECT_EQ(prefetches(unrolled), (std::vector<std::string>{"512", "576"}));
  EXPECT_EQ(matches_reference(unrolled), "");
  // A row of 256 floats (sixteen lines) under each iteration of i: its first line only.
  std::string rows = with_layers(body, "H = 5, W = 256", "vectorize(y, j, 16)", "prefetch(y, i, x, 256)");
  EXPECT_EQ(prefetches(rows), (std::vector<std::string>{"1024"}));
  // lines=N: N lines from the first element, whatever the span.
  std::string three = with_layers(body, "H = 5, W = 256", "vectorize(y, j, 16)", "prefetch(y, i, x, 256, lines=3)");
  EXPECT_EQ(prefetches(three), (std::vector<std::string>{"1024", "1088", "1152"}));
  EXPECT_EQ(matches_reference(three), "");
  std::string e = schedule_error(with_layers(body, "H = 5, W = 256", "vectorize(y, j, 16)", "prefetch(y, i, x, 256, lines=0)"));
  EXPECT_NE(e.find("the lines of a prefetch must be a whole number from 1 to 64"), std::string::npos) << e;
  e = schedule_error(with_layers(body, "H = 5, W = 256", "vectorize(y, j, 16, lines=2)", ""));
  EXPECT_NE(e.find("'vectorize' has no argument 'lines'"), std::string::npos) << e;
}

}  // namespace
}  // namespace ekb::lower::testing
