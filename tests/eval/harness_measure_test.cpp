// Measurements of the harness itself, run on demand (EKB_MEASURE=1): the overhead an evaluation
// adds per candidate (compile cold and warm, correctness checking, timing), and how much the
// speedup of one candidate varies when it is evaluated 5 times (target: within +-5% for workloads
// of 1 ms or more). Skipped in normal test runs: it takes about a minute.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>

#include "eval_test_util.h"
#include "runtime/worker.h"

namespace ekb::eval {
namespace {

struct Case {
  std::string workload, candidate_file;  // "native" is the native compiler's C itself
};

TEST(HarnessMeasure, WorkerStartAndCallLatency) {
  if (!std::getenv("EKB_MEASURE")) GTEST_SKIP() << "set EKB_MEASURE=1 to run";
  runtime::WorkerOptions wo;
  wo.executable = EKB_BINARY;
  runtime::CompileOutcome c =
      ekb::testing::test_backend().compile({runtime::Language::C, "void ekb_main(float* y) { y[0] = 1; }", "m.c"});
  ASSERT_TRUE(c.ok);
  using Clock = std::chrono::steady_clock;
  const int n = 10;
  double start_s = 0, call_s = 0;
  int64_t kernel_ns = 0;
  for (int i = 0; i < n; ++i) {
    auto t0 = Clock::now();
    runtime::Worker w(wo);
    start_s += std::chrono::duration<double>(Clock::now() - t0).count() / n;
    int64_t scratch, ns;
    ASSERT_TRUE(w.load(0, *c.artifact, {}, 5, &scratch).ok());
    runtime::TensorArena arena({{"y", runtime::BufferRole::Output, 4}});
    ASSERT_TRUE(w.attach(arena, {{0, {{0, 0}}}}, 5).ok());
    auto t1 = Clock::now();
    for (int k = 0; k < 100; ++k) ASSERT_TRUE(w.run(0, false, 0, 5, &ns).ok());
    call_s += std::chrono::duration<double>(Clock::now() - t1).count() / (100 * n);
    kernel_ns += ns;
  }
  std::printf("worker start %.1f ms; one call round trip %.1f us (the empty kernel itself: %lld ns)\n",
              start_s * 1e3, call_s * 1e6, static_cast<long long>(kernel_ns / n));
}

TEST(HarnessMeasure, OverheadAndSpeedupSpread) {
  if (!std::getenv("EKB_MEASURE")) GTEST_SKIP() << "set EKB_MEASURE=1 to run";
  const std::string dir = ekb::testing::adversarial_dir();
  std::vector<Case> cases = {
      {"linalg.gemm/medium", "ok_gemm_ikj.c"},
      {"linalg.gemm/medium", "native"},
      {"nn.relu6/mbv2_112x112x96", "ok_relu6_openmp.c"},
      {"nn.relu6/mbv2_112x112x96", "native"},
      {"nn.softmax/mbert_128x512", "ok_softmax_online.c"},
      {"linalg.gemm/small", "ok_gemm_ikj.c"},
  };
  EvalOptions o;  // the defaults: what `ekb eval` does
  o.worker_executable = EKB_BINARY;
  for (const Case& c : cases) {
    WorkloadReference& ref = ekb::testing::TestWorkloads::get().reference(c.workload);
    auto t_ref = std::chrono::steady_clock::now();
    ref.prepare(o.trials + o.recheck_trials, o.edge_trial);
    double ref_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t_ref).count();
    runtime::Source base = ekb::testing::baseline_for(ref);
    runtime::Source cand = c.candidate_file == "native" ? base : runtime::Source::from_file(dir + "/" + c.candidate_file);

    // Cold and warm compiles of the candidate, in a cache of their own.
    runtime::CpuBackendOptions bo;
    bo.cache_dir = ::testing::TempDir() + "ekb-measure-cache";
    std::filesystem::remove_all(bo.cache_dir);
    runtime::CpuBackend fresh(bo);
    double cold = fresh.compile(cand).seconds, warm = fresh.compile(cand).seconds;

    std::vector<double> speedups;
    std::vector<CandidateResult> results;
    for (int rep = 0; rep < 5; ++rep) {
      CandidateResult r = evaluate(ekb::testing::test_backend(), ref, cand, base, o);
      ASSERT_TRUE(r.correct) << r.message;
      speedups.push_back(*r.speedup);
      results.push_back(r);
    }
    std::vector<double> s = speedups;
    std::sort(s.begin(), s.end());
    const double med = s[2];
    double check = 0, time = 0;
    for (const auto& r : results) check += r.cost.check_s / 5, time += r.cost.time_s / 5;
    const CandidateResult& r0 = results[0];
    std::printf(
        "%-28s %-26s base %8.4f ms cand %8.4f ms (IQR %.1f%%) runs %4d | speedup median %.3f, "
        "range [%.3f, %.3f] = [%+.1f%%, %+.1f%%] | compile cold %.2f s warm %.4f s, check %.3f s, "
        "time %.3f s, reference %.2f s\n",
        c.workload.c_str(), c.candidate_file.c_str(), r0.baseline->median_ms, r0.time->median_ms,
        100 * (r0.time->p75_ms - r0.time->p25_ms) / r0.time->median_ms, r0.time->runs, med, s.front(),
        s.back(), 100 * (s.front() / med - 1), 100 * (s.back() / med - 1), cold, warm, check, time, ref_s);
    std::fflush(stdout);
  }
}

}  // namespace
}  // namespace ekb::eval
