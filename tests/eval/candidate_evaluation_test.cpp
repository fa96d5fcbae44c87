// One candidate of a solution set evaluated and recorded (eval/candidate_evaluation.h): what
// `ekb eval` and a workspace's `./check` both do with a candidate.
#include "eval/candidate_evaluation.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "eval/eval_test_util.h"
#include "test_paths.h"

namespace ekb::eval {
namespace {

namespace fs = std::filesystem;

constexpr const char* kWorkload = "linalg.gemm/small";

class CandidateEvaluation : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = ekb::testing::private_temp_path("candidate_evaluation");
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  CandidateRef candidate(const std::string& file, const std::string& text, int sample = 0) {
    std::ofstream(dir_ / file) << text;
    CandidateRef c;
    c.workload = *suite_.find_workload(kWorkload);
    c.solution = "linalg.gemm/" + file;
    c.sample = sample;
    c.path = (dir_ / file).string();
    return c;
  }
  static SolutionMeta direct_meta() {
    SolutionMeta m;
    m.method = "direct";
    m.model = "a-model";
    m.ledger.llm_calls = 2;
    return m;
  }
  WorkloadReference& reference() { return ekb::testing::TestWorkloads::get().reference(kWorkload); }

  fs::path dir_;
  suite::Suite suite_ = suite::Suite::load();
};

TEST_F(CandidateEvaluation, AMissingSolutionIsRecordedAsMissingWithoutRunningAnything) {
  CandidateRef c;
  c.workload = *suite_.find_workload(kWorkload);
  std::optional<CandidateResult> r = result_without_code(c, "cpu", "no solution in DIR");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->error, ErrorKind::Missing);
  EXPECT_EQ(r->message, "no solution in DIR");
  EXPECT_EQ(r->workload, kWorkload);
  EXPECT_EQ(r->task, "linalg.gemm");
  EXPECT_EQ(r->backend, "cpu");
  EXPECT_EQ(r->solution, "(none)");
  EXPECT_FALSE(r->compiled);
}

TEST_F(CandidateEvaluation, AFailedGenerationIsRecordedWithItsMetadatasKindMessageAndLedger) {
  CandidateRef c;
  c.workload = *suite_.find_workload(kWorkload);
  c.solution = "linalg.gemm/small.s1";
  c.sample = 1;
  c.meta = direct_meta();
  c.meta->status = "failed";
  c.meta->error = "the endpoint did not answer";
  std::optional<CandidateResult> r = result_without_code(c, "cpu", "unused");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->error, ErrorKind::GenerationFailed);
  EXPECT_EQ(r->message, "failed: the endpoint did not answer");
  EXPECT_EQ(r->sample, 1);
  ASSERT_TRUE(r->provenance);
  EXPECT_EQ(r->provenance->ledger.llm_calls, 2);
}

TEST_F(CandidateEvaluation, ACandidateWithCodeIsLeftToEvaluateCandidate) {
  EXPECT_FALSE(result_without_code(candidate("small.c", "/* code */\n"), "cpu", "unused"));
}

TEST_F(CandidateEvaluation, AnIrSolutionThatDoesNotParseIsACompileFailureUnderItsIdSampleAndProvenance) {
  CandidateRef c = candidate("small.s3.ekb", "pattern {\n", 3);
  c.meta = direct_meta();
  CandidateResult r = evaluate_candidate(ekb::testing::test_backend(), reference(),
                                         Baseline{ekb::testing::baseline_for(reference())}, c, ekb::testing::fast_options());
  EXPECT_EQ(r.error, ErrorKind::Compile);
  EXPECT_FALSE(r.message.empty());
  EXPECT_EQ(r.solution, "linalg.gemm/small.s3.ekb");
  EXPECT_EQ(r.sample, 3);
  EXPECT_EQ(r.backend, "cpu");
  ASSERT_TRUE(r.provenance);
  EXPECT_EQ(r.provenance->model, "a-model");
}

TEST_F(CandidateEvaluation, ACorrectCandidateIsEvaluatedUnderItsIdSampleAndProvenance) {
  const runtime::Source baseline = ekb::testing::baseline_for(reference());
  CandidateRef c = candidate("small.s2.c", baseline.text, 2);
  c.meta = direct_meta();
  EvalOptions options = ekb::testing::fast_options();
  options.time = false;
  CandidateResult r = evaluate_candidate(ekb::testing::test_backend(), reference(), Baseline{baseline}, c, options);
  EXPECT_TRUE(r.correct) << error_kind_name(r.error) << ": " << r.message;
  EXPECT_EQ(r.solution, "linalg.gemm/small.s2.c");
  EXPECT_EQ(r.sample, 2);
  ASSERT_TRUE(r.provenance);
  EXPECT_EQ(r.provenance->method, "direct");
}

}  // namespace
}  // namespace ekb::eval
