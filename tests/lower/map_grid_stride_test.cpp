// map_grid_stride: on gpu, the outer independent loops of each stage without bound loops become
// GpuGridStride loops (spread over all the threads of their kernel); the rest stays sequential.
#include <gtest/gtest.h>

#include "lower_test_util.h"

namespace ekb::lower::testing {
namespace {

TEST(MapGridStride, PureLoopsSpreadOverThreadsAndAnOrderedUpdateStaysSequential) {
  auto l = lower_text(pattern(kFourStages, "M = 3, N = 4"), "map_grid_stride", cuda_like_options(""));
  EXPECT_EQ(loop_kinds(*l.func.body),
            "j:gpu_grid_stride i:gpu_grid_stride j_1:gpu_grid_stride i_1:serial j_2:serial i_2:gpu_grid_stride")
      << l.body;
  // The pass before it leaves them serial; a cpu lowering never maps.
  auto before = lower_text(pattern(kFourStages, "M = 3, N = 4"), "insert_prefetches", cuda_like_options(""));
  EXPECT_EQ(before.body.find("gpu_grid_stride"), std::string::npos) << before.body;
  auto cpu = lower_text(pattern(kFourStages, "M = 3, N = 4"));
  EXPECT_EQ(cpu.body.find("gpu_grid_stride"), std::string::npos) << cpu.body;
}

TEST(MapGridStride, AReductionRunsWhollyInEachThread) {
  auto l = lower_text(pattern("  params M, K\n  input x : f32[M, K]\n  output y : f32[M]\n  y[i] = sum(k in 0..K: x[i, k])",
                              "M = 5, K = 7"),
                      "map_grid_stride", cuda_like_options(""));
  EXPECT_EQ(loop_kinds(*l.func.body), "i:gpu_grid_stride k:serial") << l.body;
}

TEST(MapGridStride, StagesWithBoundLoopsKeepTheirSchedule) {
  const std::string text = pattern("  params M, N\n  input x : f32[M, N]\n  output y : f32[M, N]\n  y[i, j] = 2.0 * x[i, j]",
                                    "M = 6, N = 64") +
                           "schedule gpu {\n  bind(y, i, block.x)\n  bind(y, j, thread.x)\n}\n";
  auto l = lower_text(text, "map_grid_stride", cuda_like_options(""));
  EXPECT_EQ(loop_kinds(*l.func.body), "i:gpu_block j:gpu_thread") << l.body;
}

}  // namespace
}  // namespace ekb::lower::testing
