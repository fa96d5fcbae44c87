// The OpenCL the native compiler emits, run on an OpenCL platform (PoCL here and in CI) through the
// whole evaluation protocol against the reference: built by the opencl backend, loaded by a
// sandboxed worker, checked on random and edge inputs. An even subset of the suite (every 16th
// workload) keeps CI short; EKB_OPENCL_SUITE=all runs every workload (bench/opencl_suite.sh runs
// them all through `ekb eval` and says how long it took). Skipped, saying why, without a platform.
#include <gtest/gtest.h>

#include <cstdlib>

#include "eval/eval_test_util.h"
#include "runtime/opencl_backend.h"
#include "suite_params.h"

namespace ekb::codegen {
namespace {

constexpr size_t kCiStride = 16;

// Every kCiStride-th workload in suite order, or all of them with EKB_OPENCL_SUITE=all.
std::vector<std::string> workloads_of_this_run() {
  std::vector<std::string> names = testing::all_workload_names();
  const char* all = std::getenv("EKB_OPENCL_SUITE");
  if (all && std::string(all) == "all") return names;
  std::vector<std::string> subset;
  for (size_t i = 0; i < names.size(); i += kCiStride) subset.push_back(names[i]);
  return subset;
}

class OpenCLSuite : public ::testing::TestWithParam<std::string> {};

TEST_P(OpenCLSuite, DefaultLoweringIsCorrectOnTheDevice) {
  std::string why;
  runtime::OpenCLBackend* cl = ekb::testing::test_opencl_backend(&why);
  if (!cl) GTEST_SKIP() << "no OpenCL device: " << why;
  eval::WorkloadReference& ref = ekb::testing::TestWorkloads::get().reference(GetParam());
  runtime::Source native = eval::native_baseline_source(ref.instance(), "opencl");
  eval::EvalOptions options = ekb::testing::fast_options();
  options.time = false;
  options.call_timeout_s = 60;  // a sequential stage runs on one work-item of a CPU device
  eval::CandidateResult r = eval::evaluate(*cl, ref, native, native, options);
  EXPECT_TRUE(r.correct) << GetParam() << ": " << eval::error_kind_name(r.error) << ": " << r.message << "\n"
                         << native.text;
}

INSTANTIATE_TEST_SUITE_P(All, OpenCLSuite, ::testing::ValuesIn(workloads_of_this_run()), testing::workload_test_name);

}  // namespace
}  // namespace ekb::codegen
