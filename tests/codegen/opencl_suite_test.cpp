// The OpenCL the native compiler emits, run on an OpenCL platform (PoCL here and in CI) through the
// whole evaluation protocol against the reference: built by the opencl backend, loaded by a
// sandboxed worker, checked on random and edge inputs. A stratified subset of the suite (every
// 32nd workload of each domain and level, suite::stratified_subset, so that every domain and level
// is in it) keeps CI short; EKB_OPENCL_SUITE=all runs every workload (bench/suite_all.sh and
// bench/opencl_suite.sh run them all through `ekb eval` and say how long it took). Skipped, saying
// why, without a platform.
#include <gtest/gtest.h>

#include <cstdlib>

#include "eval/eval_test_util.h"
#include "runtime/opencl_backend.h"
#include "suite/stats.h"
#include "suite_params.h"

namespace ekb::codegen {
namespace {

// The suite has grown to well over a thousand workloads: every 32nd of each stratum is about 50.
constexpr size_t kCiStride = 32;

class OpenCLSuite : public ::testing::TestWithParam<std::string> {};

TEST_P(OpenCLSuite, DefaultLoweringIsCorrectOnTheDevice) {
  std::string why;
  runtime::OpenCLBackend* cl = ekb::testing::test_opencl_backend(&why);
  if (!cl) GTEST_SKIP() << "no OpenCL device: " << why;
  eval::WorkloadReference& ref = ekb::testing::TestWorkloads::get().reference(GetParam());
  runtime::Source native = eval::native_baseline_source(ref.instance(), ir::Target::OpenCL);
  eval::EvalOptions options = ekb::testing::fast_options();
  options.time = false;
  options.call_timeout_s = 60;  // a sequential stage runs on one work-item of a CPU device
  eval::CandidateResult r = eval::evaluate(*cl, ref, native, native, options);
  EXPECT_TRUE(r.correct) << GetParam() << ": " << eval::error_kind_name(r.error) << ": " << r.message << "\n"
                         << native.text;
}

INSTANTIATE_TEST_SUITE_P(All, OpenCLSuite,
                         ::testing::ValuesIn(testing::ci_workload_names("EKB_OPENCL_SUITE", kCiStride)),
                         testing::workload_test_name);

}  // namespace
}  // namespace ekb::codegen
