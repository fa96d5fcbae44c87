// The hand-written CPU schedules (examples/schedules-cpu, the examples `ekb prompt` shows and the
// rows of bench/cpu_schedules.sh) evaluated on the cpu backend through the whole protocol (fresh
// inputs, poisoned outputs, guarded inputs, the f64 reference), for every workload they solve up
// to 10 MFLOP: a lowering change that breaks one of them fails here, not first in the benchmark.
// The larger workloads (the benchmark's GEMM, softmax, GEMV rows) run the same files at shapes
// whose f64 reference alone would take most of a CI minute.
#include <gtest/gtest.h>

#include <set>

#include "param_cache.h"
#include "eval/eval_test_util.h"
#include "eval/solution_set.h"
#include "ir/cost.h"
#include "suite_params.h"
#include "test_paths.h"

namespace ekb::codegen {
namespace {

const std::string kScheduleDir = EKB_SOURCE_DIR "/examples/schedules-cpu";
constexpr double kMaxMflop = 10;

// Found once for the test program (every test instance looks its own up here).
const std::vector<eval::CandidateRef>& scheduled_candidates() {
  static const std::vector<eval::CandidateRef> candidates = [] {
    std::vector<eval::CandidateRef> out;
    for (const eval::CandidateRef& c : eval::find_candidates(kScheduleDir, testing::embedded_suite().workloads(), ir::Target::Cpu)) {
      if (c.missing()) continue;
      const ir::CostFacts cost = ir::compute_cost(suite::bind_workload(c.workload));
      if (cost.ops() <= kMaxMflop * 1e6) out.push_back(c);
    }
    return out;
  }();
  return candidates;
}

std::vector<std::string> scheduled_workloads() {
  return ekb::testing::cached_param_list("cpu_scheduled_workloads", ekb::testing::directory_state(kScheduleDir), [] {
    std::vector<std::string> names;
    for (const eval::CandidateRef& c : scheduled_candidates()) names.push_back(c.workload.full_name());
    return names;
  });
}

class CpuSchedules : public ::testing::TestWithParam<std::string> {};

TEST_P(CpuSchedules, AreCorrectUnderTheFullProtocol) {
  eval::WorkloadReference& ref = ekb::testing::TestWorkloads::get().reference(GetParam());
  eval::CandidateRef candidate;
  for (const eval::CandidateRef& c : scheduled_candidates())
    if (c.workload.full_name() == GetParam()) candidate = c;
  ASSERT_FALSE(candidate.missing()) << GetParam();
  runtime::Source scheduled = eval::candidate_source(candidate, ref.instance(), ir::Target::Cpu);
  runtime::Source native = eval::native_baseline_source(ref.instance(), ir::Target::Cpu);
  eval::EvalOptions options = ekb::testing::fast_options();
  options.time = false;
  options.call_timeout_s = 30;
  eval::CandidateResult r = eval::evaluate(ekb::testing::test_backend(), ref, scheduled, native, options);
  EXPECT_TRUE(r.correct) << GetParam() << " (" << candidate.solution << "): " << eval::error_kind_name(r.error)
                         << ": " << r.message;
}

INSTANTIATE_TEST_SUITE_P(Examples, CpuSchedules, ::testing::ValuesIn(scheduled_workloads()),
                         testing::workload_test_name);

// The set is not empty and includes the patterns at some shape (a renamed directory or a
// broken find_candidates would otherwise leave the parameterized test with nothing to run).
TEST(CpuSchedules, CoverTheHandWrittenPatterns) {
  std::set<std::string> patterns;
  for (const eval::CandidateRef& c : scheduled_candidates()) patterns.insert(c.workload.pattern->name());
  for (const char* p : {"linalg.gemm", "nn.conv2d", "nn.dwconv3x3", "nn.pwconv", "nn.softmax", "nn.layernorm",
                        "img.gaussian3x3", "audio.fir", "transformer.sdpa", "linalg.jacobi_2d"})
    EXPECT_EQ(patterns.count(p), 1u) << p << " has no schedule example at or under " << kMaxMflop << " MFLOP";
}

}  // namespace
}  // namespace ekb::codegen
