// The CUDA the native compiler emits, for EVERY suite workload, compiled here without a GPU: the
// entry point is exactly the ABI's, and the device code compiles with NVRTC into an sm_90 cubin
// (nvcc -cubin where NVRTC is not installed; skipped, saying so, where neither is). Running it
// needs a GPU: tests/runtime/cuda_device_test.cpp.
#include <gtest/gtest.h>

#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "codegen/cuda_emitter.h"
#include "codegen/signature.h"
#include "runtime/cuda_backend.h"
#include "runtime/cuda_driver.h"
#include "runtime/subprocess.h"
#include "suite/suite.h"
#include "suite_params.h"

namespace ekb::codegen {
namespace {

// The toolkit's include directory (cuda_fp16.h), next to nvcc's bin/.
std::string cuda_include_dir() {
  std::string nvcc = runtime::find_nvcc();
  if (nvcc.empty()) return "/usr/local/cuda/include";
  return (std::filesystem::path(nvcc).parent_path().parent_path() / "include").string();
}

// Compiles the device code into an sm_90 cubin; "" on success, else the compiler's log.
// Sets *tool to what compiled it, or skips.
std::string compile_cubin(const std::string& source, const std::string& name, std::string* tool) {
  std::string why;
  if (runtime::cuda::nvrtc(&why)) {
    *tool = "nvrtc";
    std::string cubin, log;
    bool ok = runtime::cuda::nvrtc_compile_cubin(source, name, "sm_90", {"--std=c++17", "-I" + cuda_include_dir()},
                                                 &cubin, &log);
    if (ok && cubin.size() < 64) return "NVRTC returned a " + std::to_string(cubin.size()) + "-byte cubin";
    return ok ? "" : log;
  }
  std::string nvcc = runtime::find_nvcc();
  if (nvcc.empty()) return "skip: " + why + "; nvcc is not installed either";
  *tool = "nvcc";
  auto dir = std::filesystem::temp_directory_path() / ("ekb-cubin-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::string cu = (dir / "k.cu").string(), out = (dir / "k.cubin").string();
  std::ofstream(cu) << source;
  runtime::CommandResult r = runtime::run_command({nvcc, "-cubin", "-arch=sm_90", "-std=c++17", "-o", out, cu});
  std::filesystem::remove_all(dir);
  return r.ok() ? "" : r.output;
}

class CudaSuite : public ::testing::TestWithParam<std::string> {};

TEST_P(CudaSuite, DefaultLoweringCompilesForSm90) {
  auto w = testing::embedded_suite().find_workload(GetParam());
  ASSERT_TRUE(w.has_value());
  ir::Instance inst = suite::bind_workload(*w);
  std::string source = emit_cuda_source(inst);
  std::string abi = kernel_signature(inst, Target::Cuda);
  abi.pop_back();  // ';'
  if (source.find("ekb_scratch_bytes") != std::string::npos)
    abi.insert(abi.size() - 1, ",\n" + std::string(25, ' ') + "void* scratch");
  ASSERT_NE(source.find(abi + " {"), std::string::npos) << "signature differs from\n" << abi << "\nin\n" << source;
  EXPECT_NE(source.find("__global__"), std::string::npos);

  std::string tool;
  std::string log = compile_cubin(source, GetParam() + ".cu", &tool);
  if (log.rfind("skip: ", 0) == 0) GTEST_SKIP() << log.substr(6);
  EXPECT_EQ(log, "") << tool << " rejected the CUDA of " << GetParam() << ":\n" << source;
}

INSTANTIATE_TEST_SUITE_P(All, CudaSuite, ::testing::ValuesIn(testing::all_workload_names()),
                         testing::workload_test_name);

}  // namespace
}  // namespace ekb::codegen
