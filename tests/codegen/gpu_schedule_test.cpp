// The hand-written GPU schedules (examples/schedules-cuda) through the GPU emitters: for every
// workload they solve, the CUDA compiles into an sm_90 cubin (NVRTC, or nvcc -cubin) and the OpenCL
// is emitted with its launch geometry; the micro workloads run on an OpenCL device (PoCL here and
// in CI: work-groups, local memory and barriers executed for real) through the whole evaluation
// protocol against the reference. What the kernels look like: GpuEmitterScheduled.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "param_cache.h"
#include "codegen/cuda_emitter.h"
#include "codegen/opencl_emitter.h"
#include "cuda_compile_util.h"
#include "eval/eval_test_util.h"
#include "eval/solution_set.h"
#include "runtime/opencl_backend.h"
#include "suite_params.h"
#include "test_paths.h"

namespace ekb::codegen {
namespace {

const std::string kScheduleDir = EKB_SOURCE_DIR "/examples/schedules-cuda";

// Every suite workload a file in kScheduleDir solves, as "PATTERN/WORKLOAD".
std::vector<std::string> scheduled_workloads() {
  return ekb::testing::cached_param_list("gpu_scheduled_workloads", ekb::testing::directory_state(kScheduleDir), [] {
    std::vector<std::string> names;
    for (const eval::CandidateRef& c : eval::find_candidates(kScheduleDir, testing::embedded_suite().workloads(), ir::Target::Cuda))
      if (!c.missing()) names.push_back(c.workload.full_name());
    return names;
  });
}

eval::CandidateRef candidate(const std::string& workload) {
  auto w = testing::embedded_suite().find_workload(workload);
  EXPECT_TRUE(w.has_value()) << workload;
  for (const eval::CandidateRef& c : eval::find_candidates(kScheduleDir, {*w}, ir::Target::Cuda))
    if (!c.missing()) return c;
  ADD_FAILURE() << "no schedule for " << workload;
  return {};
}

class GpuSchedules : public ::testing::TestWithParam<std::string> {};

TEST_P(GpuSchedules, CudaCompilesForSm90AndOpenCLIsEmitted) {
  ir::Instance inst = suite::bind_workload(*testing::embedded_suite().find_workload(GetParam()));
  runtime::Source cuda = eval::candidate_source(candidate(GetParam()), inst, ir::Target::Cuda);
  EXPECT_NE(cuda.text.find("<<<dim3("), std::string::npos) << "no kernel of the schedule:\n" << cuda.text;
  runtime::Source cl = eval::candidate_source(candidate(GetParam()), inst, ir::Target::OpenCL);
  EXPECT_NE(cl.text.find("get_local_id(0)"), std::string::npos) << cl.text;

  std::string tool;
  std::string log = testing::compile_cubin(cuda.text, GetParam() + ".cu", &tool);
  if (log.rfind("skip: ", 0) == 0) GTEST_SKIP() << log.substr(6);
  EXPECT_EQ(log, "") << tool << " rejected the CUDA of " << GetParam() << ":\n" << cuda.text;
}

TEST_P(GpuSchedules, MicroWorkloadsAreCorrectOnAnOpenCLDevice) {
  const auto w = testing::embedded_suite().find_workload(GetParam());
  if (std::find(w->workload->tags.begin(), w->workload->tags.end(), "micro") == w->workload->tags.end())
    GTEST_SKIP() << "a CPU OpenCL device runs only the micro workloads in reasonable time";
  std::string why;
  runtime::OpenCLBackend* cl = ekb::testing::test_opencl_backend(&why);
  if (!cl) GTEST_SKIP() << "no OpenCL device: " << why;
  eval::WorkloadReference& ref = ekb::testing::TestWorkloads::get().reference(GetParam());
  runtime::Source scheduled = eval::candidate_source(candidate(GetParam()), ref.instance(), ir::Target::OpenCL);
  runtime::Source native = eval::native_baseline_source(ref.instance(), ir::Target::OpenCL);
  eval::EvalOptions options = ekb::testing::fast_options();
  options.time = false;
  options.call_timeout_s = 60;
  eval::CandidateResult r = eval::evaluate(*cl, ref, scheduled, native, options);
  EXPECT_TRUE(r.correct) << GetParam() << ": " << eval::error_kind_name(r.error) << ": " << r.message << "\n"
                         << scheduled.text;
}

INSTANTIATE_TEST_SUITE_P(Examples, GpuSchedules, ::testing::ValuesIn(scheduled_workloads()),
                         testing::workload_test_name);

TEST(GpuEmitterScheduled, GemmKernelInCudaAndOpenCL) {
  const std::string workload = "linalg.gemm/medium";
  ir::Instance inst = suite::bind_workload(*testing::embedded_suite().find_workload(workload));
  // The register-tiled all.ekb (medium.ekb, which wins for this workload, is the simple one).
  eval::CandidateRef all = candidate(workload);
  all.solution = "linalg.gemm/all.ekb";
  all.path = kScheduleDir + "/" + all.solution;
  std::string cuda = eval::candidate_source(all, inst, ir::Target::Cuda).text;
  // Shared panels declared at the kernel's top, copied by all 256 threads, between barriers; the
  // register tile a local array; the launch from the bound loops (200 x 220 in 128 x 128 tiles).
  EXPECT_NE(cuda.find("__shared__ __align__(16) float As[1024];"), std::string::npos) << cuda;
  EXPECT_NE(cuda.find("(int64_t)threadIdx.x + 16 * (int64_t)threadIdx.y"), std::string::npos) << cuda;
  EXPECT_NE(cuda.find("+= 256)"), std::string::npos) << cuda;
  size_t syncs = 0;
  for (size_t p = cuda.find("__syncthreads();"); p != std::string::npos; p = cuda.find("__syncthreads();", p + 1))
    ++syncs;
  EXPECT_EQ(syncs, 2u) << cuda;
  EXPECT_NE(cuda.find("float Cl[64]"), std::string::npos) << cuda;
  // A's panel rows (8 floats from a multiple of 8, rows of 240) are loaded as float4, stored
  // transposed one float at a time; B's panel is cut short by the edge of C, so loaded by floats.
  EXPECT_NE(cuda.find("const float4 ekb_coop0_v = (*(const float4*)&A["), std::string::npos) << cuda;
  EXPECT_NE(cuda.find("= ekb_coop0_v.w;"), std::string::npos) << cuda;
  EXPECT_EQ(cuda.find("&B["), std::string::npos) << cuda;
  EXPECT_NE(cuda.find("<<<dim3(2, 2, 1), dim3(16, 16, 1), 0, stream>>>"), std::string::npos) << cuda;

  std::string cl = eval::candidate_source(all, inst, ir::Target::OpenCL).text;
  EXPECT_NE(cl.find("(*(__global const float4*)&A["), std::string::npos) << cl;
  EXPECT_NE(cl.find("__local float As[1024] __attribute__((aligned(16)));"), std::string::npos) << cl;
  EXPECT_NE(cl.find("barrier(CLK_LOCAL_MEM_FENCE);"), std::string::npos) << cl;
  EXPECT_NE(cl.find("get_group_id(1)"), std::string::npos) << cl;
  EXPECT_NE(cl.find("global=[32, 32, 1] local=[16, 16, 1]"), std::string::npos) << cl;
}

size_t occurrences(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t p = text.find(what); p != std::string::npos; p = text.find(what, p + 1)) ++n;
  return n;
}

TEST(GpuEmitterScheduled, SoftmaxIsOneKernelWithCooperativeReductions) {
  const std::string workload = "nn.softmax/mbert_128x512";
  ir::Instance inst = suite::bind_workload(*testing::embedded_suite().find_workload(workload));
  std::string cuda = eval::candidate_source(candidate(workload), inst, ir::Target::Cuda).text;
  // One kernel: a block of 128 threads per row, the row in shared memory, the max and the sum
  // combined by warp shuffles (4 warps: a slot per warp, a barrier, then the warps' totals by a
  // butterfly over all 32 lanes, the lanes past the 4th holding the identity, so that every lane
  // ends with the total: a butterfly over 4 lanes left it in lanes 0-3 only, a bug the H200 found).
  EXPECT_EQ(occurrences(cuda, "__global__"), 1u) << cuda;
  EXPECT_NE(cuda.find("<<<dim3(128, 1, 1), dim3(128, 1, 1), 0, stream>>>"), std::string::npos) << cuda;
  EXPECT_NE(cuda.find("__shared__ __align__(16) float xs[512];"), std::string::npos) << cuda;
  EXPECT_EQ(occurrences(cuda, "__shfl_xor_sync(0xffffffffu, "), 2u * (5 + 5)) << cuda;  // 32 lanes, twice
  EXPECT_NE(cuda.find("const float4 ekb_coop0_v"), std::string::npos) << cuda;

  // OpenCL: the same shuffles through inline PTX where NVIDIA's compiler builds it, else a tree
  // over 128 slots per reduction (7 halving steps, each followed by a barrier).
  std::string cl = eval::candidate_source(candidate(workload), inst, ir::Target::OpenCL).text;
  EXPECT_EQ(occurrences(cl, "__kernel"), 1u) << cl;
  EXPECT_EQ(occurrences(cl, "as_float(ekb_shfl_xor(as_uint("), 2u * (5 + 5)) << cl;
  EXPECT_EQ(occurrences(cl, "#if defined(EKB_NV_WARP_SHUFFLE)"), 2u) << cl;
  EXPECT_NE(cl.find("__local float ekb_red"), std::string::npos) << cl;
  EXPECT_GE(occurrences(cl, "barrier(CLK_LOCAL_MEM_FENCE);"), 2u * 9) << cl;
  const std::string ptx = testing::opencl_nvidia_ptx(cl);
  if (ptx.rfind("skip: ", 0) != 0) {
    ASSERT_EQ(ptx.rfind("error: ", 0), std::string::npos) << ptx << "\n" << cl;
    EXPECT_EQ(occurrences(ptx, "shfl.sync.bfly.b32"), 2u * (5 + 5)) << ptx;
  }

  std::string tool;
  std::string log = testing::compile_cubin(cuda, "softmax.cu", &tool);
  if (log.rfind("skip: ", 0) == 0) GTEST_SKIP() << log.substr(6);
  EXPECT_EQ(log, "") << tool << " rejected:\n" << cuda;
}

TEST(GpuEmitterScheduled, DoubleBufferedGemmAlternatesPanelsAndCompiles) {
  const std::string workload = "linalg.gemm/medium";
  ir::Instance inst = suite::bind_workload(*testing::embedded_suite().find_workload(workload));
  // all.ekb with both panels double-buffered.
  std::ifstream in(kScheduleDir + "/linalg.gemm/all.ekb");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  size_t memory = text.find("memory gpu {");
  ASSERT_NE(memory, std::string::npos);
  text.insert(text.find('}', memory), "  double_buffer(As)\n  double_buffer(Bs)\n");
  const std::filesystem::path dir = ekb::testing::private_temp_path("ekb_double_buffer");
  std::filesystem::create_directories(dir / "linalg.gemm");
  std::ofstream(dir / "linalg.gemm" / "all.ekb") << text;
  eval::CandidateRef c = candidate(workload);
  c.solution = "linalg.gemm/all.ekb";
  c.path = (dir / "linalg.gemm" / "all.ekb").string();
  std::string cuda = eval::candidate_source(c, inst, ir::Target::Cuda).text;
  std::filesystem::remove_all(dir);
  // Twice the panels; a barrier in the first step's prologue and one ending each step.
  EXPECT_NE(cuda.find("__shared__ __align__(16) float As[2048];"), std::string::npos) << cuda;
  EXPECT_EQ(occurrences(cuda, "__syncthreads();"), 2u) << cuda;
  std::string tool;
  std::string log = testing::compile_cubin(cuda, "gemm_double_buffer.cu", &tool);
  if (log.rfind("skip: ", 0) == 0) GTEST_SKIP() << log.substr(6);
  EXPECT_EQ(log, "") << tool << " rejected:\n" << cuda;
}

}  // namespace
}  // namespace ekb::codegen
