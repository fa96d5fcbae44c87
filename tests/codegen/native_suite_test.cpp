// The native compiler against the reference: the default lowering's C, compiled by clang into a
// shared object, loaded with dlopen and run on generated inputs, must match ir::run_reference
// under the correctness tolerance (integers exactly, NaN/inf exactly). One test per workload, so
// that ctest runs them in parallel and names the one that fails. CI runs every third workload of
// each domain and level (about 470 of the suite's 1444, those of at most 1e8 operations);
// EKB_NATIVE_SUITE=all runs every one, as does bench/suite_all.sh through `ekb eval`.
// $EKB_NATIVE_CFLAGS overrides the compiler flags (default -O2 -march=native, for test speed; the
// cpu backend uses -O3 -march=native -fopenmp) and $EKB_NATIVE_SEED the input seed (default 1).
#include <gtest/gtest.h>

#include <cctype>
#include <cstdlib>

#include "codegen/c_emitter.h"
#include "codegen/signature.h"
#include "ir/inputs.h"
#include "ir/interpreter.h"
#include "lower/lower.h"
#include "native_test_util.h"
#include "suite/suite.h"
#include "suite_params.h"

namespace ekb::codegen {
namespace {

constexpr size_t kCiStride = 3;
// Above 1e8 operations the interpreter's reference takes 1.5-25 s (22 of the subset's 487 workloads,
// a fifth of its time); EKB_NATIVE_SUITE=all and bench/suite_all.sh still run them.
constexpr double kCiMaxReferenceOps = 1e8;

class NativeSuite : public ::testing::TestWithParam<std::string> {};

TEST_P(NativeSuite, DefaultLoweringMatchesReference) {
  auto w = testing::embedded_suite().find_workload(GetParam());
  ASSERT_TRUE(w.has_value());
  ir::Instance inst = suite::bind_workload(*w);
  std::string source = emit_c_source(lower::lower(inst));
  // The entry point is exactly the ABI's (plus the scratch argument when temps need it).
  std::string abi = kernel_signature(inst, Target::Cpu);
  abi.pop_back();  // ';'
  if (source.find("ekb_scratch_bytes") != std::string::npos)
    abi.insert(abi.size() - 1, ",\n" + std::string(14, ' ') + "void* scratch");
  ASSERT_NE(source.find(abi + " {"), std::string::npos) << "signature differs from\n"
                                                        << abi << "\nin\n"
                                                        << source;

  const char* flags = std::getenv("EKB_NATIVE_CFLAGS");
  const char* seed = std::getenv("EKB_NATIVE_SEED");
  testing::NativeKernel kernel(source, flags ? flags : "-O2 -march=native");
  auto inputs = ir::generate_inputs(inst, seed ? std::stoull(seed) : 1);
  auto got = testing::run_native(kernel, inst, inputs);
  auto want = ir::run_reference(inst, inputs);
  std::string diff = testing::compare_outputs(inst, got, want);
  EXPECT_EQ(diff, "") << GetParam() << "\n" << source;
}

INSTANTIATE_TEST_SUITE_P(All, NativeSuite,
                         ::testing::ValuesIn(testing::ci_workload_names("EKB_NATIVE_SUITE", kCiStride, kCiMaxReferenceOps)),
                         testing::workload_test_name);

}  // namespace
}  // namespace ekb::codegen
