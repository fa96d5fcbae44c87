// The GPU part of the schedule and memory layers, on the loop IR alone (no GPU needed): bind as For
// kinds and axes, shared caches loaded cooperatively between barriers, the kernel geometry the
// bound loops give, and the errors for what would be wrong or unlaunchable code.
#include "lower/schedule_bind.h"

#include <gtest/gtest.h>

#include "lir/mutator.h"
#include "lower/region.h"
#include "lower/schedule_loops.h"
#include "lower_test_util.h"

namespace ekb::lower::testing {
namespace {

// "pattern ... schedule gpu { SCHEDULE } memory gpu { MEMORY }"
std::string gpu_text(const std::string& body, const std::string& workload, const std::string& schedule,
                     const std::string& memory = "") {
  std::string t = pattern(body, workload) + "schedule gpu {\n" + schedule + "\n}\n";
  if (!memory.empty()) t += "memory gpu {\n" + memory + "\n}\n";
  return t;
}

LowerOptions gpu_options(const std::string& stop = "") {
  LowerOptions o;
  o.target = ir::Target::Cuda;
  o.storage.max_stack_bytes = 0;
  o.stop_after = stop;
  return o;
}

// The loop IR after apply_schedule for a gpu target, or "error: ..." when a directive is refused.
std::string gpu_lir(const std::string& text) {
  auto l = ir::testing::load(text);
  if (!l.inst) return "verifier: " + l.diags;
  try {
    return to_string(*lower(*l.inst, gpu_options("apply_schedule")).body);
  } catch (const ScheduleError& e) {
    return std::string("error: ") + e.what();
  }
}

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t p = text.find(what); p != std::string::npos; p = text.find(what, p + 1)) ++n;
  return n;
}

const char* kScale =
    "  params M, N\n  input x : f32[M, N] in [-1, 1]\n  output y : f32[M, N]\n  y[i, j] = 2.0 * x[i, j]";
const char* kGemm =
    "  params M, N, K\n  input A : f32[M, K] in [-1, 1]\n  input B : f32[K, N] in [-1, 1]\n  output C : f32[M, N]\n"
    "  C[i, j] = sum(k in 0..K: A[i, k] * B[k, j])";
// 32x32 block tiles of 8x8 threads with 4x4 outputs each, k in steps of 8.
const char* kGemmTiles =
    "split(C, i, 32, bi, ii)\n  split(C, j, 32, bj, jj)\n  split(C, ii, 4, ty, ri)\n  split(C, jj, 4, tx, rj)\n"
    "  split(C, k, 8, ko, ki)\n  reorder(C, bi, bj, ty, tx, ko, ki, ri, rj)\n"
    "  bind(C, bi, block.y)\n  bind(C, bj, block.x)\n  bind(C, ty, thread.y)\n  bind(C, tx, thread.x)";

TEST(ScheduleBind, LoopsBecomeBlocksAndThreads) {
  std::string lir = gpu_lir(gpu_text(kScale, "M = 6, N = 100",
                                     "split(y, j, 32, jo, ji)\n  bind(y, i, block.y)\n  bind(y, jo, block.x)\n"
                                     "  bind(y, ji, thread.x)"));
  EXPECT_NE(lir.find("for i in [0, +6) gpu_block.y"), std::string::npos) << lir;
  EXPECT_NE(lir.find("gpu_block.x"), std::string::npos) << lir;
  EXPECT_NE(lir.find("gpu_thread.x"), std::string::npos) << lir;

  auto l = ir::testing::load(gpu_text(kScale, "M = 6, N = 100",
                                      "split(y, j, 32, jo, ji)\n  bind(y, i, block.y)\n  bind(y, jo, block.x)\n"
                                      "  bind(y, ji, thread.x)"));
  ASSERT_TRUE(l.inst) << l.diags;
  Func f = lower(*l.inst, gpu_options());
  KernelGeometry g = gpu_kernel_geometry(f, *top_level(f).stmts.at(0));
  EXPECT_EQ(g.grid, (std::array<int64_t, 3>{4, 6, 1}));  // 100 columns in 4 tiles of 32
  EXPECT_EQ(g.block, (std::array<int64_t, 3>{32, 1, 1}));
}

TEST(ScheduleBind, ScheduleGpuAppliesToEveryGpuBackendAndNotToCpu) {
  std::string text = gpu_text(kScale, "M = 6, N = 8", "bind(y, i, block.x)\n  bind(y, j, thread.x)");
  for (ir::Target target : {ir::Target::Cuda, ir::Target::OpenCL}) {
    auto l = ir::testing::load(text);
    ASSERT_TRUE(l.inst) << l.diags;
    LowerOptions o = gpu_options("apply_schedule");
    o.target = target;
    EXPECT_NE(to_string(*lower(*l.inst, o).body).find("gpu_thread.x"), std::string::npos) << ir::target_name(target);
  }
  EXPECT_EQ(scheduled_lir(text).find("gpu_"),
            std::string::npos);  // cpu ignores `schedule gpu`
}

TEST(ScheduleBind, IllegalBindingsNameTheDirective) {
  // Blocks cannot combine a reduction's parts (threads can: CooperativeReduction below).
  std::string e = gpu_lir(gpu_text(kGemm, "M = 8, N = 8, K = 8", "bind(C, k, block.x)"));
  EXPECT_NE(e.find("'bind(C, k, block.x)': cannot bind reduction loop 'k' to block.x"), std::string::npos) << e;
  EXPECT_NE(e.find("rfactor"), std::string::npos) << e;
  // An ordered loop whose iterations read what earlier ones wrote (a scan).
  e = gpu_lir(pattern("  params N\n  input x : f32[N] in [-1, 1]\n  output y : f32[N]\n  y[i] = x[i]\n"
                      "  for i in 1..N: y[i] = y[i - 1] + x[i]",
                      "N = 16") +
              "schedule gpu {\n  bind(y.update(0), i, thread.x)\n}\n");
  EXPECT_NE(e.find("cannot bind loop 'i' to thread.x"), std::string::npos) << e;
  // Bound twice; on cpu.
  e = gpu_lir(gpu_text(kScale, "M = 6, N = 8", "bind(y, i, block.x)\n  bind(y, i, thread.x)"));
  EXPECT_NE(e.find("is already gpu_block.x"), std::string::npos) << e;
  e = schedule_error(pattern(kScale, "M = 6, N = 8") + "schedule cpu {\n  bind(y, i, block.x)\n}\n");
  EXPECT_NE(e.find("no meaning on cpu"), std::string::npos) << e;
  e = gpu_lir(gpu_text(kScale, "M = 6, N = 8", "parallel(y, i)"));
  EXPECT_NE(e.find("no meaning on gpu"), std::string::npos) << e;
}

TEST(ScheduleBind, LaunchLimitsAreErrors) {
  std::string e = gpu_lir(gpu_text(kScale, "M = 6, N = 4096", "split(y, j, 2048, jo, ji)\n  bind(y, ji, thread.x)"));
  EXPECT_NE(e.find("2048 iterations, more than a block's size along that axis (1024)"), std::string::npos) << e;
  e = gpu_lir(gpu_text(kScale, "M = 64, N = 64", "bind(y, i, thread.y)\n  bind(y, j, thread.x)"));
  EXPECT_NE(e.find("64 x 64 x 1 = 4096 threads, more than a block may have (1024)"), std::string::npos) << e;
  e = gpu_lir(gpu_text(kScale, "M = 100000, N = 2", "bind(y, i, block.y)"));
  EXPECT_NE(e.find("more than the grid allows along that axis (65535)"), std::string::npos) << e;
  e = gpu_lir(gpu_text(kScale, "M = 6, N = 8", "bind(y, j, block.x)"));
  EXPECT_NE(e.find("is bound to block.x but is not among the outermost loops of its stage"), std::string::npos) << e;
  e = gpu_lir(gpu_text(kScale, "M = 6, N = 8", "bind(y, i, thread.x)\n  bind(y, j, thread.x)"));
  EXPECT_NE(e.find("inside another loop bound to the same axis"), std::string::npos) << e;
}

TEST(ScheduleBind, PerThreadBufferWrittenByTheBlockIsAnError) {
  // A cache allocated at block level is one copy per thread; the thread loops inside would each
  // fill their own part of their own copy, and the write-back would store the rest as garbage.
  std::string e = gpu_lir(gpu_text(kScale, "M = 8, N = 64",
                                   "split(y, j, 32, jo, ji)\n  bind(y, i, block.y)\n  bind(y, ji, thread.x)",
                                   "cache_write(y, i, global, yc)"));
  EXPECT_NE(e.find("'yc' is allocated outside the loops bound to threads"), std::string::npos) << e;
}

TEST(MemoryShared, GemmPanelsLoadedCooperativelyBetweenBarriers) {
  std::string lir = gpu_lir(gpu_text(kGemm, "M = 64, N = 64, K = 32", kGemmTiles,
                                     "cache_read(A, C, ko, shared, As)\n  cache_read(B, C, ko, shared, Bs)\n"
                                     "  cache_write(C, tx, local, Cl)"));
  // The whole block's panels (32 rows x 8 of A, 8 x 32 of B), not one thread's 4 rows.
  EXPECT_NE(lir.find("allocate As: f32[256] in shared"), std::string::npos) << lir;
  EXPECT_NE(lir.find("allocate Bs: f32[256] in shared"), std::string::npos) << lir;
  EXPECT_NE(lir.find("allocate Cl: f32[16] in local"), std::string::npos) << lir;
  EXPECT_EQ(count(lir, "gpu_cooperative"), 4u) << lir;  // two loops per copy
  // One copy phase for both caches: copy, copy, barrier, compute, barrier.
  EXPECT_EQ(count(lir, "barrier"), 2u) << lir;
  size_t first_barrier = lir.find("barrier"), last_copy = lir.rfind("gpu_cooperative");
  EXPECT_LT(last_copy, first_barrier) << lir;
}

TEST(MemoryShared, ErrorsForSharedCaches) {
  // Not inside a block.
  std::string e = gpu_lir(gpu_text(kScale, "M = 8, N = 8", "bind(y, j, thread.x)", "cache_read(x, y, i, shared, xs)"));
  EXPECT_NE(e.find("shared memory belongs to a block of threads"), std::string::npos) << e;
  // Over the block's shared memory: a 128 x 128 f32 panel is 64 KiB.
  e = gpu_lir(gpu_text(kGemm, "M = 256, N = 256, K = 256",
                       "split(C, i, 128, bi, ii)\n  split(C, j, 128, bj, jj)\n  reorder(C, bi, bj, k, ii, jj)\n"
                       "  bind(C, bi, block.y)\n  bind(C, bj, block.x)\n  split(C, jj, 16, jt, tx)\n"
                       "  bind(C, tx, thread.x)",
                       "cache_read(A, C, bj, shared, As)"));
  EXPECT_NE(e.find("more than a block's shared memory (49152)"), std::string::npos) << e;
  // What a cache_write into shared memory would need (who writes back what) is not there.
  e = gpu_lir(gpu_text(kGemm, "M = 64, N = 64, K = 32", kGemmTiles, "cache_write(C, bj, shared, Cs)"));
  EXPECT_NE(e.find("cache_write into shared memory is not supported"), std::string::npos) << e;
}

TEST(MemoryShared, DoubleBufferAlternatesTwoPanelsWithOneBarrierPerStep) {
  const std::string caches = "cache_read(A, C, ko, shared, As)\n  cache_read(B, C, ko, shared, Bs)\n";
  std::string lir = gpu_lir(gpu_text(kGemm, "M = 64, N = 64, K = 32", kGemmTiles,
                                     caches + "  double_buffer(As)\n  double_buffer(Bs)"));
  // Two panels each (a leading dimension of 2), the first step's copies and their barrier in a
  // prologue, the next step's copies before this step's products, one barrier ending each step.
  EXPECT_NE(lir.find("allocate As: f32[512] in shared"), std::string::npos) << lir;
  EXPECT_NE(lir.find("allocate Bs: f32[512] in shared"), std::string::npos) << lir;
  EXPECT_EQ(count(lir, "barrier"), 2u) << lir;
  EXPECT_EQ(count(lir, "gpu_cooperative"), 8u) << lir;  // this step's copy and the next one's, per cache
  size_t prologue = lir.find("if (ko == 0)"), next = lir.find("if ((ko + 1) < (0 + 4))");
  ASSERT_NE(prologue, std::string::npos) << lir;
  ASSERT_NE(next, std::string::npos) << lir;
  EXPECT_LT(prologue, lir.find("barrier")) << lir;
  EXPECT_LT(lir.find("barrier"), next) << lir;  // the prologue's barrier, then the next panels' copies
  EXPECT_LT(lir.rfind("gpu_cooperative"), lir.rfind("barrier")) << lir;
  // The products read this step's panel.
  EXPECT_NE(lir.find("As[((ko - 0) % 2), "), std::string::npos) << lir;

  // Only A double-buffered: B's copy keeps its barrier, A's next panel follows it.
  lir = gpu_lir(gpu_text(kGemm, "M = 64, N = 64, K = 32", kGemmTiles, caches + "  double_buffer(As)"));
  EXPECT_NE(lir.find("allocate As: f32[512] in shared"), std::string::npos) << lir;
  EXPECT_NE(lir.find("allocate Bs: f32[256] in shared"), std::string::npos) << lir;
  EXPECT_EQ(count(lir, "barrier"), 2u) << lir;
  EXPECT_EQ(count(lir, "gpu_cooperative"), 6u) << lir;
}

TEST(MemoryShared, DoubleBufferErrors) {
  // Twice; a register cache; a cache filled once per block (no next iteration); on cpu.
  std::string e = gpu_lir(gpu_text(kGemm, "M = 64, N = 64, K = 32", kGemmTiles,
                                   "cache_read(A, C, ko, shared, As)\n  double_buffer(As)\n  double_buffer(As)"));
  EXPECT_NE(e.find("'As' is already double-buffered"), std::string::npos) << e;
  e = gpu_lir(gpu_text(kGemm, "M = 64, N = 64, K = 32", kGemmTiles, "cache_read(A, C, ki, local, Al)\n  double_buffer(Al)"));
  EXPECT_NE(e.find("'Al' is not a shared cache"), std::string::npos) << e;
  e = gpu_lir(gpu_text(kGemm, "M = 64, N = 64, K = 32", kGemmTiles, "cache_read(A, C, bj, shared, As)\n  double_buffer(As)"));
  EXPECT_NE(e.find("which needs a sequential loop"), std::string::npos) << e;
  e = gpu_lir(gpu_text(kGemm, "M = 64, N = 64, K = 32", kGemmTiles, "double_buffer(A)"));  // an input
  EXPECT_NE(e.find("there is no cache 'A'"), std::string::npos) << e;
  e = schedule_error(pattern(kGemm, "M = 8, N = 8, K = 8") + "memory cpu {\n  double_buffer(A)\n}\n");
  EXPECT_NE(e.find("double_buffer applies to gpu shared memory"), std::string::npos) << e;
}

const char* kRowSum =
    "  params M, N\n  input x : f32[M, N] in [-1, 1]\n  output y : f32[M, N]\n  temp s : f32[M]\n"
    "  s[i] = sum(j in 0..N: x[i, j])\n  y[i, j] = x[i, j] - s[i]";

TEST(CooperativeReduction, AReductionLoopBoundToThreadsCombinesItsPartsInTheBlock) {
  // Its own kernel: one block per row, 64 threads each summing a strided part of it; the combine
  // takes a shared slot per thread; the row's sum is stored once.
  const std::string own = "split(s, j, 64, jo, ji)\n  reorder(s, ji, jo)\n  bind(s, i, block.x)\n  bind(s, ji, thread.x)";
  std::string lir = gpu_lir(gpu_text(kRowSum, "M = 5, N = 200", own));
  EXPECT_NE(lir.find("for ji in [0, +64) gpu_thread.x"), std::string::npos) << lir;
  auto l = ir::testing::load(gpu_text(kRowSum, "M = 5, N = 200", own));
  ASSERT_TRUE(l.inst) << l.diags;
  Func f = lower(*l.inst, gpu_options());
  const Stmt& kernel = *top_level(f).stmts.at(0);
  KernelGeometry g = gpu_kernel_geometry(f, kernel);
  EXPECT_EQ(g.grid, (std::array<int64_t, 3>{5, 1, 1}));
  EXPECT_EQ(g.block, (std::array<int64_t, 3>{64, 1, 1}));
  EXPECT_EQ(g.shared_bytes, 64 * 4);
  const Stmt* loop = nullptr;
  for_each_stmt(kernel, [&](const Stmt& x) {
    if (x.kind == StmtKind::For && x.for_kind == ForKind::GpuThread) loop = &x;
  });
  ASSERT_NE(loop, nullptr);
  std::vector<ThreadAccumulator> acc = thread_accumulators(*loop);
  ASSERT_EQ(acc.size(), 1u);
  EXPECT_EQ(acc[0].op, BinOp::Add);
  EXPECT_EQ(acc[0].type, ScalarType::F32);

  // With its consumer in one kernel (compute_at into the row's block): the sum in a per-thread
  // buffer that every thread fills with the combined total.
  lir = gpu_lir(gpu_text(kRowSum, "M = 5, N = 200",
                         "split(y, j, 64, jo, ji)\n  reorder(y, i, ji, jo)\n  bind(y, i, block.x)\n"
                         "  bind(y, ji, thread.x)\n  compute_at(s, y, i)\n  split(s, j, 64, jo, ji)\n"
                         "  reorder(s, ji, jo)\n  bind(s, ji, thread.x)"));
  EXPECT_EQ(count(lir, "gpu_block.x"), 1u) << lir;
  EXPECT_EQ(count(lir, "gpu_thread.x"), 2u) << lir;
}

TEST(CooperativeReduction, Errors) {
  // argmax keeps an index beside the value: no tree over threads.
  std::string e = gpu_lir(gpu_text("  params N\n  input x : f32[N] in [-1, 1]\n  output a : i64[1]\n"
                                   "  a[z] = argmax(j in 0..N: x[j])",
                                   "N = 64", "bind(a, j, thread.x)"));
  EXPECT_NE(e.find("which is not a sum, product, min or max"), std::string::npos) << e;
  // A reduction moved out of its statement accumulates in memory.
  e = gpu_lir(gpu_text(kGemm, "M = 8, N = 8, K = 8", "reorder(C, k, i, j)\n  bind(C, k, thread.x)"));
  EXPECT_NE(e.find("accumulates in memory"), std::string::npos) << e;
}


// A bound stage built by hand: `body` inside a block loop over 4 blocks.
Func kernel_of(StmtP body) {
  Func f;
  f.name = "k";
  f.buffers.push_back({"out", ScalarType::F32, {128}, BufferRole::Output});
  auto blocks = std::make_shared<Stmt>(*make_for("bx", index_imm(0), index_imm(4), std::move(body)));
  blocks->for_kind = ForKind::GpuBlock;
  f.body = blocks;
  return f;
}

StmtP thread_loop(const std::string& v, int64_t extent, StmtP body) {
  auto s = std::make_shared<Stmt>(*make_for(v, index_imm(0), index_imm(extent), std::move(body)));
  s->for_kind = ForKind::GpuThread;
  return s;
}

StmtP store_at(const std::string& v) {
  return make_store(
      "out",
      {binary(BinOp::Add, binary(BinOp::Mul, var("bx", ScalarType::Index), index_imm(32)), var(v, ScalarType::Index))},
      float_imm(ScalarType::F32, 1.0));
}

TEST(GpuKernelGeometry, BarriersAndStoresOfTheWholeBlock) {
  // The block has 32 threads along x; a 16-iteration thread loop leaves half of them out.
  Func f = kernel_of(make_block({thread_loop("t1", 32, store_at("t1")), thread_loop("t2", 16, make_barrier())}));
  try {
    gpu_kernel_geometry(f, *f.body);
    FAIL() << "a barrier in a guarded thread loop was accepted";
  } catch (const ScheduleError& e) {
    EXPECT_NE(std::string(e.what()).find("not reached by every thread of the block: loop 't2'"), std::string::npos)
        << e.what();
  }
  // A condition on the thread index diverges too.
  Func g = kernel_of(
      thread_loop("t", 32,
                  make_block({store_at("t"),
                              make_if(binary(BinOp::Lt, var("t", ScalarType::Index), index_imm(5)), make_barrier())})));
  EXPECT_THROW(gpu_kernel_geometry(g, *g.body), ScheduleError);
  // A store outside the thread loops would be repeated by every thread of the block, with values
  // that may differ between them (a load: another thread may have stored there meanwhile).
  Func r = kernel_of(make_block(
      {thread_loop("t", 32, store_at("t")),
       make_store("out", {var("bx", ScalarType::Index)}, load("out", ScalarType::F32, {index_imm(127)}))}));
  try {
    gpu_kernel_geometry(r, *r.body);
    FAIL() << "a store outside the thread loops was accepted";
  } catch (const ScheduleError& e) {
    EXPECT_NE(std::string(e.what()).find("'out' is stored outside the loops bound to threads"), std::string::npos)
        << e.what();
  }
  // The same value at the same place in every thread: the block's first thread stores it.
  Func once = kernel_of(make_block({thread_loop("t", 32, store_at("t")),
                                    make_store("out", {var("bx", ScalarType::Index)}, float_imm(ScalarType::F32, 0.0))}));
  EXPECT_NO_THROW(gpu_kernel_geometry(once, *once.body));
  // Every thread reaches it: fine.
  Func h = kernel_of(thread_loop("t", 32, make_block({store_at("t"), make_barrier()})));
  KernelGeometry geometry = gpu_kernel_geometry(h, *h.body);
  EXPECT_EQ(geometry.threads(), 32);
  EXPECT_EQ(geometry.grid[0], 4);
}

TEST(CooperativeReduction, NotReachedByEveryThreadIsAnError) {
  // A reduction under a condition that may differ between threads: its combine's barriers would hang.
  StmtP reduce = thread_loop("t", 32, make_assign("acc", binary(BinOp::Add, var("acc", ScalarType::F32),
                                                                    float_imm(ScalarType::F32, 1.0))));
  StmtP cond = make_if(binary(BinOp::Lt, load("out", ScalarType::F32, {var("bx", ScalarType::Index)}),
                              float_imm(ScalarType::F32, 0.0)),
                       reduce);
  Func f = kernel_of(make_declare("acc", ScalarType::F32, float_imm(ScalarType::F32, 0.0),
                                  make_block({thread_loop("t1", 32, store_at("t1")), cond})));
  try {
    gpu_kernel_geometry(f, *f.body);
    FAIL() << "a cooperative reduction under a divergent condition was accepted";
  } catch (const ScheduleError& e) {
    EXPECT_NE(std::string(e.what()).find("the cooperative reduction over loop 't'"), std::string::npos) << e.what();
  }
}

TEST(CooperativeReduction, RowsOnThreadYEachReduceOverThreadX) {
  // Four rows per block, one per thread.y, each row's sum a reduction over 32 threads along x
  // placed at its row (compute_at): the row loop starts at a different index in each thread.y but
  // runs once in every thread, so every thread reaches each combine.
  const std::string rows =
      "split(y, i, 4, bi, ti)\n  split(y, j, 32, jo, ji)\n  reorder(y, bi, ti, ji, jo)\n  bind(y, bi, block.x)\n"
      "  bind(y, ti, thread.y)\n  bind(y, ji, thread.x)\n  compute_at(s, y, ti)\n  split(s, j, 32, jo, ji)\n"
      "  reorder(s, ji, jo)\n  bind(s, ji, thread.x)";
  std::string lir = gpu_lir(gpu_text(kRowSum, "M = 8, N = 200", rows));
  EXPECT_EQ(lir.find("error"), std::string::npos) << lir;
  EXPECT_EQ(count(lir, "gpu_thread.y"), 1u) << lir;
  EXPECT_EQ(count(lir, "gpu_thread.x"), 2u) << lir;
  auto l = ir::testing::load(gpu_text(kRowSum, "M = 8, N = 200", rows));
  ASSERT_TRUE(l.inst) << l.diags;
  Func f = lower(*l.inst, gpu_options());
  KernelGeometry g = gpu_kernel_geometry(f, *top_level(f).stmts.at(0));
  EXPECT_EQ(g.grid, (std::array<int64_t, 3>{2, 1, 1}));
  EXPECT_EQ(g.block, (std::array<int64_t, 3>{32, 4, 1}));

  // A loop whose trip count differs between threads does diverge: a barrier in it is refused.
  StmtP uneven = make_for("r", index_imm(0), var("t", ScalarType::Index), make_barrier());
  Func h = kernel_of(thread_loop("t", 32, make_block({store_at("t"), uneven})));
  try {
    gpu_kernel_geometry(h, *h.body);
    FAIL() << "a barrier in a loop of per-thread trip count was accepted";
  } catch (const ScheduleError& e) {
    EXPECT_NE(std::string(e.what()).find("the trip count of loop 'r' differs between threads"), std::string::npos)
        << e.what();
  }
  // One that only starts elsewhere in each thread does not.
  StmtP shifted = make_for("r", var("t", ScalarType::Index), index_imm(3), make_barrier());
  Func k = kernel_of(thread_loop("t", 32, make_block({store_at("t"), shifted})));
  EXPECT_NO_THROW(gpu_kernel_geometry(k, *k.body));
}

}  // namespace
}  // namespace ekb::lower::testing
