// The CUDA the native compiler emits, compiled here without a GPU: the entry point is exactly the
// ABI's, and the device code compiles with NVRTC into an sm_90 cubin (nvcc -cubin where NVRTC is
// not installed; skipped, saying so, where neither is). Running it needs a GPU:
// tests/runtime/cuda_device_test.cpp and bench/gpu.sh. CI compiles every third workload of each
// domain and level (the suite has grown past 1400 workloads); EKB_CUDA_SUITE=all compiles every one.
#include <gtest/gtest.h>

#include <cctype>
#include <cstdlib>

#include "codegen/cuda_emitter.h"
#include "codegen/signature.h"
#include "cuda_compile_util.h"
#include "lower/lower.h"
#include "suite/suite.h"
#include "suite_params.h"

namespace ekb::codegen {
namespace {

class CudaSuite : public ::testing::TestWithParam<std::string> {};

TEST_P(CudaSuite, DefaultLoweringCompilesForSm90) {
  auto w = testing::embedded_suite().find_workload(GetParam());
  ASSERT_TRUE(w.has_value());
  ir::Instance inst = suite::bind_workload(*w);
  std::string source = emit_cuda_source(lower::lower(inst, lower::lower_options_for(ir::Target::Cuda)));
  std::string abi = kernel_signature(inst, Target::Cuda);
  abi.pop_back();  // ';'
  if (source.find("ekb_scratch_bytes") != std::string::npos)
    abi.insert(abi.size() - 1, ",\n" + std::string(25, ' ') + "void* scratch");
  ASSERT_NE(source.find(abi + " {"), std::string::npos) << "signature differs from\n" << abi << "\nin\n" << source;
  EXPECT_NE(source.find("__global__"), std::string::npos);

  std::string tool;
  std::string log = testing::compile_cubin(source, GetParam() + ".cu", &tool);
  if (log.rfind("skip: ", 0) == 0) GTEST_SKIP() << log.substr(6);
  EXPECT_EQ(log, "") << tool << " rejected the CUDA of " << GetParam() << ":\n" << source;
}

INSTANTIATE_TEST_SUITE_P(All, CudaSuite, ::testing::ValuesIn(testing::ci_workload_names("EKB_CUDA_SUITE", 3)),
                         testing::workload_test_name);

}  // namespace
}  // namespace ekb::codegen
