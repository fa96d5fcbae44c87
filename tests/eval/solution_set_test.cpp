// How a solutions directory maps to workloads of several type signatures (docs/SOLUTIONS.md), and
// the element-type check appended to source solutions (eval/element_type_check.h).
#include "eval/solution_set.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "eval/eval_test_util.h"
#include "runtime/cuda_backend.h"
#include "suite/suite.h"
#include "test_paths.h"

namespace ekb::eval {
namespace {

namespace fs = std::filesystem;

// linalg.gemm/medium is f32 and its held-out twin medium_f16 has the same params.
constexpr const char* kGemmF32 =
    "void ekb_main(const float* C_in, const float* A, const float* B, float* C,\n"
    "              int64_t NI, int64_t NJ, int64_t NK) {\n"
    "  for (int64_t i = 0; i < NI; ++i)\n"
    "    for (int64_t j = 0; j < NJ; ++j) {\n"
    "      float s = 0;\n"
    "      for (int64_t k = 0; k < NK; ++k) s += 1.5f * A[i * NK + k] * B[k * NJ + j];\n"
    "      C[i * NJ + j] = 1.2f * C_in[i * NJ + j] + s;\n"
    "    }\n"
    "}\n";

class SolutionSetTypes : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = ekb::testing::private_temp_path("solution_set_types");
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "linalg.gemm");
  }
  void write(const std::string& file, const std::string& text) { std::ofstream(dir_ / "linalg.gemm" / file) << text; }
  suite::WorkloadEntry workload(const std::string& name) {
    auto w = suite_.find_workload(name);
    EXPECT_TRUE(w) << name;
    return *w;
  }
  std::vector<CandidateRef> find(const std::vector<std::string>& names) {
    std::vector<suite::WorkloadEntry> selected;
    for (const auto& n : names) selected.push_back(workload(n));
    return find_candidates(dir_.string(), selected, ir::Target::Cpu);
  }
  runtime::CompileOutcome compile(const std::string& file, const std::string& workload_name) {
    CandidateRef c;
    c.workload = workload(workload_name);
    c.solution = file;
    c.path = (dir_ / "linalg.gemm" / file).string();
    ir::Instance inst = suite::bind_workload(c.workload);
    return ekb::testing::test_backend().compile(candidate_source(c, inst, ir::Target::Cpu));
  }
  fs::path dir_;
  suite::Suite suite_ = suite::Suite::load();
};

TEST_F(SolutionSetTypes, AWholePatternFileForOneTypeSignatureServesTheWorkloadsOfThatSignature) {
  write("all.c", kGemmF32);
  write("all.f16.c", "/* the f16 kernel */\n");
  auto c = find({"linalg.gemm/medium", "linalg.gemm/medium_f16", "linalg.gemm/small"});
  ASSERT_EQ(c.size(), 3u);
  EXPECT_EQ(c[0].solution, "linalg.gemm/all.c");
  EXPECT_EQ(c[1].solution, "linalg.gemm/all.f16.c");
  EXPECT_EQ(c[2].solution, "linalg.gemm/all.c");
  EXPECT_EQ(workload_type_signature(c[1].workload.pattern->module.pattern, *c[1].workload.workload), "f16");
  // A per-workload file still wins over both.
  write("medium_f16.c", "/* this workload only */\n");
  EXPECT_EQ(find({"linalg.gemm/medium_f16"})[0].solution, "linalg.gemm/medium_f16.c");
}

TEST_F(SolutionSetTypes, AWholePatternFileNamingNoTypeSignatureIsAnError) {
  write("all.fp16.c", kGemmF32);  // a typo would otherwise be ignored silently
  try {
    find({"linalg.gemm/medium"});
    ADD_FAILURE() << "accepted all.fp16.c";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("all.f16.c"), std::string::npos) << e.what();
  }
}

TEST_F(SolutionSetTypes, AnF32KernelOnTheF16TwinFailsToCompileSayingElementTypesDiffer) {
  write("all.c", kGemmF32);
  runtime::CompileOutcome f16 = compile("all.c", "linalg.gemm/medium_f16");
  EXPECT_FALSE(f16.ok);
  EXPECT_EQ(f16.message,
            "element types differ: this workload's C_in is f16 (ekb_f16) but the source's ekb_main declares float "
            "(and 3 more tensors)")
      << f16.log;
  // The same file on its own element types compiles as before.
  runtime::CompileOutcome f32 = compile("all.c", "linalg.gemm/medium");
  EXPECT_TRUE(f32.ok) << f32.log;
}

TEST_F(SolutionSetTypes, TheElementTypeCheckCoversCppAndKernelsWithScratch) {
  write("all.cpp", std::string("extern \"C\" ") + kGemmF32);
  runtime::CompileOutcome cpp = compile("all.cpp", "linalg.gemm/medium_f16");
  EXPECT_FALSE(cpp.ok);
  EXPECT_NE(cpp.message.find("element types differ: this workload's C_in is f16"), std::string::npos) << cpp.log;
  write("all.c",
        "int64_t ekb_scratch_bytes(int64_t NI, int64_t NJ, int64_t NK) { return 64; }\n"
        "void ekb_main(const double* C_in, const double* A, const double* B, double* C,\n"
        "              int64_t NI, int64_t NJ, int64_t NK, void* scratch) {}\n");
  runtime::CompileOutcome scratch = compile("all.c", "linalg.gemm/medium");
  EXPECT_FALSE(scratch.ok);
  EXPECT_NE(scratch.message.find("this workload's C_in is f32 (float) but the source's ekb_main declares double"),
            std::string::npos)
      << scratch.log;
}

TEST_F(SolutionSetTypes, TheElementTypeCheckCompilesWithNvccAndNamesCudasTypeSpellings) {
  if (runtime::find_nvcc().empty()) GTEST_SKIP() << "nvcc is not installed";
  fs::copy_file(ekb::testing::adversarial_dir() + "/cuda/ok_gemm.cu", dir_ / "linalg.gemm" / "all.cu");
  runtime::CudaBackendOptions o;
  o.arch = "sm_90";  // compiles without a device
  o.cache_dir = ekb::testing::test_cache_dir();
  runtime::CudaBackend cuda(o);
  auto compile_cu = [&](const std::string& workload_name) {
    CandidateRef c;
    c.workload = workload(workload_name);
    c.solution = "all.cu";
    c.path = (dir_ / "linalg.gemm" / "all.cu").string();
    return cuda.compile(candidate_source(c, suite::bind_workload(c.workload), ir::Target::Cuda));
  };
  runtime::CompileOutcome f16 = compile_cu("linalg.gemm/medium_f16");
  EXPECT_FALSE(f16.ok);
  EXPECT_EQ(f16.message,
            "element types differ: this workload's C_in is f16 (__half) but the source's ekb_main declares float "
            "(and 3 more tensors)")
      << f16.log;
  runtime::CompileOutcome f32 = compile_cu("linalg.gemm/medium");
  EXPECT_TRUE(f32.ok) << f32.log;
}

TEST_F(SolutionSetTypes, ASourceWithoutEkbMainOrWithOtherDifferencesIsLeftToTheHarness) {
  // int instead of int64_t params is no element type difference: no check fires (the ABI mismatch
  // is the harness's to find at run time, as before).
  write("all.c",
        "void ekb_main(const float* C_in, const float* A, const float* B, float* C, int NI, int NJ, int NK) {}\n");
  EXPECT_TRUE(compile("all.c", "linalg.gemm/medium_f16").ok);
  // A misspelt entry point, named right only in comments and strings, still compiles (and fails to
  // load, as before).
  write("all.c", "// defines no ekb_main\nconst char* s = \"ekb_main\"; /* ekb_main */ void ekb_mian(void) {}\n");
  EXPECT_TRUE(compile("all.c", "linalg.gemm/medium_f16").ok);
}

}  // namespace
}  // namespace ekb::eval
