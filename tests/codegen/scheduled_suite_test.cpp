// Scheduled IR solutions of suite patterns, end to end through the harness's IR-solution path
// (eval::candidate_source: parse, bind to the suite workload, check the interface, lower with the
// schedule, emit C), compiled like a source solution and checked against the reference.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "../lower/lower_test_util.h"
#include "eval/solution_set.h"
#include "ir/printer.h"
#include "suite/suite.h"
#include "test_paths.h"

namespace ekb::codegen {
namespace {

const suite::Suite& embedded() {
  static const suite::Suite s = suite::Suite::load();
  return s;
}

// "" when the solution (the suite pattern plus `schedule`) matches the reference.
std::string scheduled_solution_matches(const std::string& workload, const std::string& schedule,
                                       std::string* source = nullptr, const std::string& memory = "") {
  auto w = embedded().find_workload(workload);
  if (!w) return "no workload " + workload;
  ir::Instance inst = suite::bind_workload(*w);
  std::string path = ekb::testing::private_temp_path("ekb_scheduled_solution", ".ekb");
  std::ofstream(path) << ir::print_pattern(w->pattern->module.pattern) << "\nschedule cpu {\n" << schedule << "\n}\n"
                      << (memory.empty() ? "" : "memory cpu {\n" + memory + "\n}\n");
  eval::CandidateRef c{*w, "solution.ekb", 0, path, false};
  runtime::Source s = eval::candidate_source(c, inst);
  std::filesystem::remove(path);
  if (source) *source = s.text;
  testing::NativeKernel kernel(s.text, lower::testing::kScheduledFlags);
  auto inputs = ir::generate_inputs(inst, 7);
  std::string diff = testing::compare_outputs(inst, testing::run_native(kernel, inst, inputs),
                                              ir::run_reference(inst, inputs));
  return diff.empty() ? "" : diff + "\n" + s.text;
}

TEST(ScheduledSuite, GemmTiledWithTheReductionBetweenTilesParallelVectorized) {
  std::string source;
  EXPECT_EQ(scheduled_solution_matches("linalg.gemm/small",
                                       "  tile(C, i, j, 8, 32, io, jo, ii, ji)\n"
                                       "  split(C, k, 16, ko, ki)\n"
                                       "  reorder(C, io, jo, ko, ki, ii, ji)\n"
                                       "  parallel(C, io)\n"
                                       "  vectorize(C, ji, 8)\n"
                                       "  unroll(C, ii, 4)",
                                       &source),
            "");
  EXPECT_NE(source.find("#pragma omp parallel for"), std::string::npos) << source;
  // The split's guard differs between lanes (70 columns): the last block of columns runs as
  // explicit SIMD with masked loads and stores (codegen/simd_loop.h, tail=mask).
  EXPECT_NE(source.find("ekb_load_masked_f32x8("), std::string::npos) << source;
  EXPECT_NE(source.find("ekb_store_masked_f32x8(&C["), std::string::npos) << source;
}

TEST(ScheduledSuite, SoftmaxRowsInParallelWithVectorizedColumns) {
  EXPECT_EQ(scheduled_solution_matches("nn.softmax/mbert_attn_512x128",
                                       "  parallel(m, r)\n"
                                       "  reorder(s, c, r)\n"
                                       "  vectorize(s, r, 8)\n"
                                       "  split(y, r, 4, ro, ri)\n"
                                       "  parallel(y, ro)\n"
                                       "  vectorize(y, c, 8)"),
            "");
}

TEST(ScheduledSuite, SoftmaxMaxThroughRfactor) {
  EXPECT_EQ(scheduled_solution_matches("nn.softmax/imagenet_1x1000",
                                       "  split(m, c, 64, co, ci, tail=peel)\n"
                                       "  rfactor(m, co, mf)\n"
                                       "  parallel(mf, mf)"),
            "");
}

TEST(ScheduledSuite, GaussianBlurTiledParallelVectorized) {
  EXPECT_EQ(scheduled_solution_matches("img.gaussian3x3/qqvga_160x120_f32",
                                       "  tile(dst, y, x, 8, 32, yo, xo, yi, xi, tail=shift_inwards)\n"
                                       "  fuse(dst, yo, xo, tiles)\n"
                                       "  parallel(dst, tiles)\n"
                                       "  vectorize(dst, xi, 8)\n"
                                       "  unroll(dst, dx, 3)"),
            "");
}

TEST(ScheduledSuite, BoxBlurComputesItsRowsInsideTheRowTile) {
  for (const char* workload : {"img.box_blur3x3/qvga_320x240_f32", "img.box_blur3x3/vww_96x96_u8"}) {
    std::string source;
    EXPECT_EQ(scheduled_solution_matches(workload,
                                         "  split(dst, y, 8, yo, yi)\n"
                                         "  compute_at(bx, dst, yo)\n"
                                         "  parallel(dst, yo)\n"
                                         "  vectorize(bx, x, 8)\n"
                                         "  vectorize(dst, x, 8)",
                                         &source),
              "")
        << workload;
    // bx holds the 10 rows a tile of 8 reads, one buffer per thread.
    size_t parallel = source.find("#pragma omp parallel for"), buffer = source.find(" bx[");
    EXPECT_NE(parallel, std::string::npos) << source;
    EXPECT_LT(parallel, buffer) << source;
  }
}

TEST(ScheduledSuite, GemmRegisterTileAndPanelOfB) {
  std::string source;
  EXPECT_EQ(scheduled_solution_matches("linalg.gemm/small",
                                       "  tile(C, i, j, 4, 16, io, jo, ii, ji)\n"
                                       "  reorder(C, io, jo, k, ii, ji)\n"
                                       "  parallel(C, io)",
                                       &source,
                                       "  cache_read(B, C, jo, tile, Bt)\n"
                                       "  cache_write(C, jo, local, Cl)\n"
                                       "  align(Bt, 64)"),
            "");
  EXPECT_NE(source.find("float Cl[64]"), std::string::npos) << source;
  EXPECT_EQ(scheduled_solution_matches("linalg.gemm/small", "  tile(C, i, j, 8, 8, io, jo, ii, ji)", nullptr,
                                       "  layout(B, pack(1, 8))\n  cache_write(C, jo, local, Cl)"),
            "");
}

TEST(ScheduledSuite, ConvWithPackedFiltersAndInput) {
  EXPECT_EQ(scheduled_solution_matches("nn.conv2d/ic_resnet8_32x32x3", "  parallel(y, oh)", nullptr,
                                       "  layout(w, pack(0, 8))\n  layout(x, order(0, 3, 1, 2))"),
            "");
}

TEST(ScheduledSuite, IllegalDirectiveIsACandidateErrorNamingIt) {
  try {
    scheduled_solution_matches("audio.biquad_df1/block_2x32", "  parallel(w.update(0), t)");
    FAIL() << "no error";
  } catch (const eval::CandidateError& e) {
    EXPECT_NE(std::string(e.what()).find("'parallel(w.update(0), t)': cannot parallelize loop 't'"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace ekb::codegen
