// pipeline(C, x, P, l): the consumer's nest runs one iteration of x late, fused into the producer's
// loop l; the temps it reads get two slots. Checked on the loop IR, against the reference (plain,
// vectorized with streaming stores, a guarded split's tail, a stencil whose box spans rows), and
// for the directives it refuses.
#include <gtest/gtest.h>

#include <random>

#include "lower_test_util.h"

namespace ekb::lower::testing {
namespace {

// Softmax with the exponentials in a temp that the sum and the output read (examples/schedules-cpu).
const char* kSoftmax =
    "  params R, C\n  input x : f32[R, C] in [-4, 4]\n  output y : f32[R, C]\n"
    "  temp m : f32[R]\n  temp e : f32[R, C]\n  temp s : f32[R]\n"
    "  m[r] = max(c in 0..C: x[r, c])\n  e[r, c] = exp(x[r, c] - m[r])\n  s[r] = sum(c in 0..C: e[r, c])\n"
    "  y[r, c] = e[r, c] * (1.0 / s[r])";

std::string placed(const std::string& split) {
  return split + "\n  compute_at(s, y, ri)\n  compute_at(e, y, ri)\n  compute_at(m, y, ri)\n  parallel(y, ro)";
}

TEST(SchedulePipeline, ConsumerRunsOneIterationLateInTheProducersLoop) {
  std::string text = with_schedule(kSoftmax, "R = 8, C = 32", placed("split(y, r, 4, ro, ri)") + "\n  pipeline(y, ri, e, c)");
  std::string lir = scheduled_lir(text);
  // e and s get two slots each, allocated around the loop, which runs one iteration more.
  EXPECT_NE(lir.find("allocate e: f32[64] in global"), std::string::npos) << lir;
  EXPECT_NE(lir.find("allocate s: f32[2] in global"), std::string::npos) << lir;
  EXPECT_LT(lir.find("allocate e:"), lir.find("for ri in [0, +5)")) << lir;
  // Between the first and the last iteration, both in one loop: y of row ri - 1 with e of row ri.
  size_t fused = lir.find("if ((ri > 0) && (ri < 4))");
  ASSERT_NE(fused, std::string::npos) << lir;
  size_t e_store = lir.find("e[(ri % 2)", fused), y_store = lir.find("y[", fused);
  EXPECT_LT(e_store, y_store) << lir;
  EXPECT_LT(y_store, lir.find("else", fused)) << lir;
  EXPECT_NE(lir.find("((ri - 1) % 2)", fused), std::string::npos) << lir;
  EXPECT_EQ(matches_reference(text), "");
}

TEST(SchedulePipeline, VectorizedStreamingStoresAndAGuardedTail) {
  const std::string vector = "\n  vectorize(e, c, 16)\n  vectorize(y, c, 16)\n  pipeline(y, ri, e, c)\n}\n"
                             "memory cpu {\n  nontemporal(y)";
  EXPECT_EQ(matches_reference(with_schedule(kSoftmax, "R = 12, C = 64", placed("split(y, r, 4, ro, ri)") + vector)), "");
  // 7 rows in blocks of 4, split after compute_at: the last block's guard covers the body, and
  // holds for the consumer at ri - 1.
  std::string tail = with_schedule(kSoftmax, "R = 7, C = 32",
                                   "compute_at(s, y, r)\n  compute_at(e, y, r)\n  compute_at(m, y, r)\n"
                                   "  split(y, r, 4, ro, ri)\n  parallel(y, ro)\n  pipeline(y, ri, e, c)");
  EXPECT_NE(scheduled_lir(tail).find("(((ro * 4) + (ri + -1)) < 7)"), std::string::npos) << scheduled_lir(tail);
  EXPECT_EQ(matches_reference(tail), "");
}

TEST(SchedulePipeline, ConsumerReadsTheWholeRowOfTheIterationBefore) {
  // dst reads its row of t reversed: fused in t's own row it would read elements not yet computed;
  // one row late, the row is complete.
  std::string text = with_schedule(
      "  params H, W\n  input src : f32[H, W] in [0, 4]\n  output dst : f32[H, W]\n  temp t : f32[H, W]\n"
      "  t[y, x] = sqrt(src[y, x])\n  dst[y, x] = t[y, x] - t[y, W - 1 - x]",
      "H = 6, W = 9", "compute_at(t, dst, y)\n  pipeline(dst, y, t, x)");
  std::string lir = scheduled_lir(text);
  EXPECT_NE(lir.find("allocate t: f32[18] in global"), std::string::npos) << lir;
  EXPECT_NE(lir.find(" in [0, +7) {"), std::string::npos) << lir;  // the row loop, one row more
  EXPECT_EQ(matches_reference(text), "");
}

// Property: random pipelined schedules of softmax (sizes, block factors dividing the rows or not,
// vector widths, threads, streaming stores, prefetches) either are refused with a diagnostic or
// match the reference. Most must be accepted, so that the property says something.
constexpr int kWidths[] = {1, 4, 8, 16};

TEST(SchedulePipeline, RandomPipelinedSchedulesMatchTheReference) {
  std::mt19937_64 rng(20261201);
  auto pick = [&](int n) { return static_cast<int>(std::uniform_int_distribution<int>(0, n - 1)(rng)); };
  int accepted = 0, refused = 0;
  for (int n = 0; n < 40; ++n) {
    const int rows = 1 + pick(13), block = 2 + pick(7), width = kWidths[pick(4)];
    const int cols = width * (1 + pick(4)) + (pick(4) == 0 ? 1 + pick(3) : 0);  // now and then a vector tail
    std::string placements = "compute_at(s, y, r)\n  compute_at(e, y, r)\n  compute_at(m, y, r)";
    std::string schedule = placements + "\n  split(y, r, " + std::to_string(block) + ", ro, ri)";
    if (pick(2)) schedule += "\n  parallel(y, ro)";
    if (width > 1) schedule += "\n  vectorize(e, c, " + std::to_string(width) + ")\n  vectorize(y, c, " + std::to_string(width) + ")";
    schedule += "\n  pipeline(y, ri, e, c)";
    std::string memory;
    if (pick(2)) memory += "\n  nontemporal(y)";
    if (pick(2)) memory += "\n  prefetch(e, c, x, " + std::to_string(cols) + ")";
    if (!memory.empty()) schedule += "\n}\nmemory cpu {" + memory;
    std::string text = with_schedule(kSoftmax, "R = " + std::to_string(rows) + ", C = " + std::to_string(cols), schedule);
    std::string error = schedule_error(text);
    if (!error.empty()) {
      EXPECT_NE(error.find("'pipeline("), std::string::npos) << error;
      ++refused;
      continue;
    }
    ++accepted;
    EXPECT_EQ(matches_reference(text), "") << schedule;
  }
  EXPECT_GE(accepted, 25) << refused << " refused";
  std::printf("%d random pipelined schedules matched the reference, %d refused\n", accepted, refused);
}

TEST(SchedulePipeline, RefusesWhatWouldChangeTheResults) {
  auto error_of = [](const std::string& workload, const std::string& schedule) {
    return schedule_error(with_schedule(kSoftmax, workload, schedule));
  };
  // A parallel loop has no order to be one iteration late in.
  std::string e = error_of("R = 8, C = 32", "compute_at(s, y, r)\n  compute_at(e, y, r)\n  compute_at(m, y, r)\n"
                                            "  parallel(y, r)\n  pipeline(y, r, e, c)");
  EXPECT_NE(e.find("'pipeline(y, r, e, c)': loop 'r' is parallel: a pipeline needs its iterations in order"),
            std::string::npos)
      << e;
  // The loops to fuse must have one range: y's c vectorized, e's not.
  e = error_of("R = 8, C = 32", placed("split(y, r, 4, ro, ri)") + "\n  vectorize(y, c, 16)\n  pipeline(y, ri, e, c)");
  EXPECT_NE(e.find("do not have the same constant range"), std::string::npos) << e;
  // A producer left at root is not in the loop.
  e = error_of("R = 8, C = 32", "split(y, r, 4, ro, ri)\n  compute_at(s, y, ri)\n  pipeline(y, ri, e, c)");
  EXPECT_NE(e.find("loop 'c' of 'e' is not inside loop 'ri'"), std::string::npos) << e;
  // A reduction's loop runs under its accumulator: the consumer cannot be fused into it.
  e = error_of("R = 8, C = 32", placed("split(y, r, 4, ro, ri)") + "\n  pipeline(y, ri, s, c)");
  EXPECT_NE(e.find("is under a condition, an accumulator"), std::string::npos) << e;
  // Peeled tails leave two copies of the loop.
  e = error_of("R = 7, C = 32", "split(y, r, 4, ro, ri, tail=peel)\n  pipeline(y, ri, e, c)");
  EXPECT_NE(e.find("copies"), std::string::npos) << e;
  // Split before compute_at, the guard covers the consumer's nest alone.
  e = error_of("R = 7, C = 32", placed("split(y, r, 4, ro, ri)") + "\n  pipeline(y, ri, e, c)");
  EXPECT_NE(e.find("split the loop after compute_at"), std::string::npos) << e;
  // The consumer's own stage is not a producer.
  e = error_of("R = 8, C = 32", placed("split(y, r, 4, ro, ri)") + "\n  pipeline(y, ri, y, c)");
  EXPECT_NE(e.find("a stage of 'y' itself"), std::string::npos) << e;
}

TEST(SchedulePipeline, IsACpuDirective) {
  std::string text = pattern(kSoftmax, "R = 8, C = 32") +
                     "schedule {\n  pipeline(y, r, e, c)\n}\n";  // in `schedule gpu`, a verifier error
  auto l = ir::testing::load(text);
  ASSERT_TRUE(l.inst) << l.diags;
  LowerOptions o;
  o.target = ir::Target::Cuda;
  try {
    lower(*l.inst, o);
    FAIL() << "lowered";
  } catch (const ScheduleError& err) {
    EXPECT_NE(std::string(err.what()).find("it has no meaning on gpu"), std::string::npos) << err.what();
  }
}

}  // namespace
}  // namespace ekb::lower::testing
