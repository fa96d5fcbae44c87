// The default GPU schedule as the CUDA emitter prints it: which stages spread over blocks and
// threads, which run on one thread, where temps live, what NVRTC sees.
#include <gtest/gtest.h>

#include "codegen/cuda_emitter.h"
#include "lower/lower.h"
#include "codegen/suite_params.h"

namespace ekb::codegen {
namespace {

std::string cuda_of(const std::string& workload) {
  return emit_cuda_source(lower::lower(testing::bound_workload(workload), lower::lower_options_for(ir::Target::Cuda)));
}

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t p = text.find(what); p != std::string::npos; p = text.find(what, p + 1)) ++n;
  return n;
}

TEST(CudaEmitter, ElementwiseStageIsOneGridStrideKernel) {
  std::string cu = cuda_of("nn.relu6/mbv2_035_96_48x48x48");
  EXPECT_EQ(count(cu, "__global__"), 1u) << cu;
  EXPECT_NE(cu.find("over blocks and threads"), std::string::npos) << cu;
  EXPECT_NE(cu.find("ekb_flat += (int64_t)gridDim.x * blockDim.x"), std::string::npos) << cu;
  EXPECT_EQ(count(cu, "<<<"), 1u) << cu;
  EXPECT_NE(cu.find(", 0, stream>>>"), std::string::npos) << cu;
  EXPECT_EQ(cu.find("sequential: one thread"), std::string::npos) << cu;
}

TEST(CudaEmitter, OrderedUpdateRunsOnOneThreadAfterTheParallelStage) {
  // The biquad cascade: the state's initialization is pure (spread), the recurrence over time is
  // ordered and reads the previous section (one thread), the copies out are pure again.
  std::string cu = cuda_of("audio.biquad_df1/block_2x32");
  size_t parallel = cu.find("/* s, t over blocks and threads */");
  size_t sequential = cu.find("sequential: one thread");
  ASSERT_NE(parallel, std::string::npos) << cu;
  ASSERT_NE(sequential, std::string::npos) << cu;
  EXPECT_LT(parallel, sequential);
  EXPECT_NE(cu.find("/* n over blocks and threads */"), std::string::npos) << cu;
  // Launches in program order on the stream, one per kernel.
  EXPECT_EQ(count(cu, "__global__"), count(cu, "<<<")) << cu;
  EXPECT_LT(cu.find("ekb_kernel_0<<<"), cu.find("ekb_kernel_1<<<"));
}

TEST(CudaEmitter, TempsLiveInTheScratchWorkspace) {
  // A temp written by one kernel and read by the next must be device memory, not a local array.
  std::string cu = cuda_of("audio.lpc/g729_240_p10");
  EXPECT_NE(cu.find("extern \"C\" int64_t ekb_scratch_bytes("), std::string::npos) << cu;
  EXPECT_NE(cu.find("cudaStream_t stream,\n                         void* scratch)"), std::string::npos) << cu;
  EXPECT_EQ(cu.find("__attribute__((aligned"), std::string::npos) << cu;
  // Each kernel declares only the temps it uses.
  EXPECT_EQ(cu.find("was declared but never"), std::string::npos);
  size_t k0 = cu.find("__global__ void ekb_kernel_0"), k1 = cu.find("__global__ void ekb_kernel_1");
  std::string first = cu.substr(k0, k1 - k0);
  EXPECT_NE(first.find("xw ="), std::string::npos) << first;
  EXPECT_EQ(first.find("ak ="), std::string::npos) << first;
}

TEST(CudaEmitter, HostSideIsHiddenFromNvrtc) {
  std::string cu = cuda_of("linalg.gemm/small");
  size_t guard = cu.find("#if !defined(__CUDACC_RTC__)");
  ASSERT_NE(guard, std::string::npos);
  EXPECT_LT(cu.rfind("__global__"), guard);
  EXPECT_GT(cu.find("extern \"C\" void ekb_main("), guard);
  EXPECT_NE(cu.find("#endif /* the host side */"), std::string::npos);
  // The reduction stays sequential inside each thread of the (i, j) space.
  EXPECT_NE(cu.find("over blocks and threads"), std::string::npos) << cu;
}

TEST(CudaEmitter, HalfPrecisionUsesCudaTypesAndConversions) {
  std::string cu = cuda_of("audio.fir/audio48k_480x128_f16");
  EXPECT_NE(cu.find("#include <cuda_fp16.h>"), std::string::npos);
  EXPECT_NE(cu.find("const __half*"), std::string::npos) << cu;
  EXPECT_NE(cu.find("__half2float("), std::string::npos) << cu;
  EXPECT_NE(cu.find("__float2half_rn("), std::string::npos) << cu;
}

}  // namespace
}  // namespace ekb::codegen
