// `ekb emit`: the native compiler's output for one workload, as C or as loop IR.
#include <gtest/gtest.h>

#include "run_ekb.h"
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include "test_paths.h"

namespace {

using Result = ekb::testing_cli::EkbResult;
Result ekb(const std::string& args) { return ekb::testing_cli::run_ekb(args); }

bool contains(const std::string& s, const std::string& what) { return s.find(what) != std::string::npos; }

TEST(CliEmit, PrintsTheGeneratedC) {
  Result r = ekb("emit nn.softmax/kws_1x12");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "void ekb_main(const float* x,\n              float* y,")) << r.out;
  EXPECT_TRUE(contains(r.out, "expf(")) << r.out;
}

TEST(CliEmit, PrintsTheLoopIrAfterAnyPass) {
  Result r = ekb("emit nn.softmax/kws_1x12 --lir");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "func ekb_main(in x: f32[1, 12], out y: f32[1, 12], R = 1, C = 12)")) << r.out;
  Result early = ekb("emit nn.softmax/kws_1x12 --lir --after lower_definitions");
  ASSERT_EQ(early.code, 0) << early.err;
  EXPECT_TRUE(contains(early.out, "max(c in [0, +(12 - 0)): x[r, c])")) << early.out;
}

TEST(CliEmit, Mistakes) {
  EXPECT_EQ(ekb("emit nn.softmax/nope").code, 2);
  Result opencl = ekb("emit nn.softmax/kws_1x12 --backend opencl");
  EXPECT_EQ(opencl.code, 0) << opencl.err;
  EXPECT_TRUE(contains(opencl.out, "__kernel void ekb_kernel_0(")) << opencl.out;
  EXPECT_TRUE(contains(opencl.out, "/* ekb-launch\n")) << opencl.out;
  EXPECT_TRUE(contains(opencl.out, "\nkernel ekb_kernel_0 global=[")) << opencl.out;
  EXPECT_NE(ekb("emit nn.softmax/kws_1x12 --backend vulkan").code, 0);
  Result cuda = ekb("emit nn.softmax/kws_1x12 --backend cuda");
  EXPECT_EQ(cuda.code, 0) << cuda.err;
  EXPECT_TRUE(contains(cuda.out, "extern \"C\" void ekb_main(")) << cuda.out;
  EXPECT_TRUE(contains(cuda.out, "cudaStream_t stream")) << cuda.out;
  EXPECT_NE(ekb("emit nn.softmax/kws_1x12 --lir --after nonsense").code, 0);
}

}  // namespace

namespace {

// An IR solution: the suite's relu6 file (pattern and workloads) plus a schedule block.
std::string relu6_solution(const std::string& schedule) {
  std::ifstream in(EKB_SOURCE_DIR "/suite/nn/relu6.ekb");
  std::stringstream text;
  text << in.rdbuf() << "\nschedule cpu {\n" << schedule << "\n}\n";
  std::string path = ekb::testing::private_temp_path("ekb_emit_schedule", ".ekb");
  std::ofstream(path) << text.str();
  return path;
}

TEST(CliEmit, ScheduleFilePrintsTheScheduledC) {
  Result r = ekb("emit nn.relu6/mbv2_035_96_48x48x48 --schedule " +
                 relu6_solution("  fuse(y, h, w, hw)\n  parallel(y, hw)\n  vectorize(y, c, 16)"));
  ASSERT_EQ(r.code, 0) << r.err;
  // The arguments are each thread's copies (firstprivate): shared, they would be reloaded after calls.
  EXPECT_TRUE(contains(r.out, "#pragma omp parallel for firstprivate(x, y, N, H, W, C)\n  for (int64_t hw = 0; hw < 2304; ++hw)"))
      << r.out;
  // The channel loop as explicit SIMD code: the clamp as vector max and min.
  EXPECT_TRUE(contains(r.out, "16 lanes at once")) << r.out;
  EXPECT_TRUE(contains(r.out, "ekb_fmin_f32x16(ekb_fmax_f32x16(ekb_load_f32x16(&x[")) << r.out;
}

TEST(CliEmit, IllegalScheduleIsAnErrorWithItsLocation) {
  Result r = ekb("emit nn.relu6/mbv2_035_96_48x48x48 --schedule " + relu6_solution("  unroll(y, q, 4)"));
  EXPECT_EQ(r.code, 2);
  EXPECT_TRUE(contains(r.err, "ekb_emit_schedule_CliEmit.IllegalScheduleIsAnErrorWithItsLocation_")) << r.err;
  // The directive's line: the suite file's lines, the blank line, "schedule cpu {", then it.
  std::ifstream suite_file(EKB_SOURCE_DIR "/suite/nn/relu6.ekb");
  std::string line;
  int lines = 0;
  while (std::getline(suite_file, line)) ++lines;
  EXPECT_TRUE(contains(r.err, ".ekb:" + std::to_string(lines + 3) + ":")) << r.err;
  EXPECT_TRUE(contains(r.err, "has no loop 'q'")) << r.err;
}

// EKB_LOG_LIR=1: each pass's name and the loop IR after it, on stderr, in pipeline order.
TEST(CliEmit, LoweringLogsEveryPassWhenAsked) {
  ::setenv("EKB_LOG_LIR", "1", 1);
  Result r = ekb("emit nn.softmax/kws_1x12 --lir");
  ::unsetenv("EKB_LOG_LIR");
  ASSERT_EQ(r.code, 0) << r.err;
  size_t first = r.err.find("lower: after lower_definitions\n"), last = r.err.find("lower: after simplify\n");
  ASSERT_NE(first, std::string::npos) << r.err;
  ASSERT_NE(last, std::string::npos) << r.err;
  EXPECT_LT(first, last);
  EXPECT_TRUE(contains(r.err, "func ekb_main(")) << r.err;
}

}  // namespace
