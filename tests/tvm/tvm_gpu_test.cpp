// The tvm compiler interface's gpu route (docs/TVM.md, "The gpu route"): TVM's OpenCL kernels run
// through the full protocol on PoCL (the OpenCL device here), and its CUDA kernels, wrapped in the
// ABI's ekb_main, compile with nvcc as the cuda backend compiles a candidate.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "codegen/suite_params.h"
#include "eval/eval_test_util.h"
#include "run_ekb.h"
#include "runtime/cuda_backend.h"
#include "suite/suite.h"
#include "test_paths.h"
#include "tvm/tvm_compiler.h"
#include "tvm_test_util.h"

namespace {

using ekb::testing_cli::run_ekb;
namespace fs = std::filesystem;

using ekb::tvm::testing::bind;
using ekb::tvm::testing::contains;

std::string test_name(const ::testing::TestParamInfo<std::string>& info) {
  std::string n = info.param;
  for (char& c : n)
    if (!isalnum(static_cast<unsigned char>(c))) c = '_';
  return n;
}

bool have_pocl() {
  static const bool ok = run_ekb("eval --backend opencl --platform pocl -s native --no-timing linalg.gemm/mini").code == 0;
  return ok;
}

// One workload per kind of computation: TVM's OpenCL kernels compile on PoCL and are correct on
// every trial.
class TvmOpenclWorkload : public ::testing::TestWithParam<std::string> {};

TEST_P(TvmOpenclWorkload, CompilesAndIsCorrectThroughTheFullProtocolOnPocl) {
  if (!have_pocl()) GTEST_SKIP() << "no PoCL platform here";
  const std::string dir = ekb::testing::private_temp_path("tvm_opencl_eval");
  fs::create_directories(dir);
  const std::string json = dir + "/results.json";
  auto r = run_ekb("eval -s tvm --backend opencl --platform pocl --no-timing --db " + dir + "/r.db --json " + json +
                   " " + GetParam());
  ASSERT_EQ(r.code, 0) << r.err;
  nlohmann::json doc = nlohmann::json::parse(std::ifstream(json));
  ASSERT_EQ(doc["results"].size(), 1u) << doc.dump();
  const auto& res = doc["results"][0];
  EXPECT_EQ(res["solution"], "tvm:default");
  EXPECT_TRUE(res["compiled"].get<bool>()) << res.value("message", "");
  EXPECT_TRUE(res["correct"].get<bool>()) << res.dump();
  fs::remove_all(dir);
}

INSTANTIATE_TEST_SUITE_P(AcrossDomains, TvmOpenclWorkload,
                         ::testing::Values("nn.add_relu/resnet20_8x8x64",     // elementwise
                                           "nn.softmax/kws_1x12",             // temps shared by two kernels
                                           "linalg.gemm/mini",                // gemm
                                           "nn.conv2d/kws_49x10x1_k10x4_s2",  // conv2d, padded
                                           "nn.layernorm/kwt1_99x64",         // reductions: mean and variance
                                           "audio.biquad_df2t/block_2x32",    // a recurrence: one thread
                                           "qnn.hard_swish/mbv3s_7x7x576"),   // a clamped left shift of negatives
                         test_name);

// TVM's CUDA kernels and the ekb_main launching them compile with nvcc for sm_90 (no GPU needed).
class TvmCudaWorkload : public ::testing::TestWithParam<std::string> {};

TEST_P(TvmCudaWorkload, TheWrappedSourceCompilesWithNvcc) {
  if (ekb::runtime::find_nvcc().empty()) GTEST_SKIP() << "nvcc is not installed";
  ekb::tvm::TvmOutput out = ekb::tvm::compile(bind(GetParam()), ekb::ir::Target::Cuda);
  EXPECT_EQ(out.source.language, ekb::runtime::Language::Cuda);
  EXPECT_TRUE(contains(out.source.text, "extern \"C\" void ekb_main(")) << out.source.text;
  EXPECT_TRUE(contains(out.source.text, "<<<")) << out.source.text;
  ekb::runtime::CudaBackendOptions o;
  o.cache_dir = ekb::testing::test_cache_dir();
  o.arch = "sm_90";
  ekb::runtime::CudaBackend backend(o);
  ekb::runtime::CompileOutcome c = backend.compile(out.source);
  EXPECT_TRUE(c.ok) << c.message << "\n" << c.log << "\n" << out.source.text;
}

INSTANTIATE_TEST_SUITE_P(AcrossDomains, TvmCudaWorkload,
                         ::testing::Values("nn.softmax/kws_1x12",                // temps in scratch
                                           "linalg.gemm/mini",                   // grid-stride over two loops
                                           "audio.fir/audio48k_480x128_f16",     // half conversions
                                           "qnn.conv2d/kws_49x10x1_k10x4_s2",    // int8, requantization helpers
                                           "audio.biquad_df2t/block_2x32",       // a recurrence: one thread
                                           "linalg.lu/mini"),                    // an in-place factorization
                         test_name);

// The launch TVM's kernels get is the one they were written for: a single-thread kernel <<<1, 1>>>,
// a grid-stride stage enough blocks of 256 threads for one iteration each, and the temps the
// kernels share declared as scratch.
TEST(TvmGpu, KernelsAreLaunchedInOrderWithTheirExtentsAndSharedTempsAsScratch) {
  ekb::tvm::TvmOutput cuda = ekb::tvm::compile(bind("nn.softmax/kws_1x12"), ekb::ir::Target::Cuda);
  EXPECT_TRUE(contains(cuda.source.text, "extern \"C\" int64_t ekb_scratch_bytes(")) << cuda.source.text;
  const size_t single = cuda.source.text.find("ekb_tvm_main_0_kernel<<<1, 1, 0, stream>>>");
  const size_t grid = cuda.source.text.find("ekb_tvm_main_1_kernel<<<1, 256, 0, stream>>>");
  ASSERT_NE(single, std::string::npos) << cuda.source.text;
  ASSERT_NE(grid, std::string::npos) << cuda.source.text;
  EXPECT_LT(single, grid);
  ekb::tvm::TvmOutput opencl = ekb::tvm::compile(bind("nn.softmax/kws_1x12"), ekb::ir::Target::OpenCL);
  EXPECT_EQ(opencl.source.language, ekb::runtime::Language::OpenCL);
  EXPECT_TRUE(contains(opencl.source.text, "scratch ekb_tvm_m 4")) << opencl.source.text;
  EXPECT_TRUE(contains(opencl.source.text, "kernel ekb_tvm_main_1_kernel global=[256] local=[256]"))
      << opencl.source.text;
}

TEST(TvmCli, EmitForAGpuBackendPrintsTvmsKernelsWrapped) {
  auto cuda = run_ekb("emit nn.softmax/kws_1x12 --compiler tvm --backend cuda");
  ASSERT_EQ(cuda.code, 0) << cuda.err;
  EXPECT_TRUE(contains(cuda.out, "T.thread_binding")) << cuda.out;
  EXPECT_TRUE(contains(cuda.out, "__global__")) << cuda.out;
  EXPECT_TRUE(contains(cuda.out, "cudaStream_t stream")) << cuda.out;
  auto opencl = run_ekb("emit nn.softmax/kws_1x12 --compiler tvm --backend opencl");
  ASSERT_EQ(opencl.code, 0) << opencl.err;
  EXPECT_TRUE(contains(opencl.out, "__kernel void")) << opencl.out;
  EXPECT_TRUE(contains(opencl.out, "/* ekb-launch")) << opencl.out;
}

}  // namespace
