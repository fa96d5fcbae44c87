// Random GPU schedules on an OpenCL device (PoCL here and in CI): for four small patterns
// (elementwise, a GEMM with shared panels, double-buffered or not, a row sum through rfactor, a row reduction bound to
// threads: a cooperative reduction in one kernel with its consumer or in a kernel of its own) and random sizes, random
// split factors and tail strategies, binds to random axes, optional shared caches and unrolling. A
// schedule the compiler refuses must say why (a ScheduleError); every accepted one is emitted as
// OpenCL, built and run by the opencl backend through the whole evaluation protocol, and must match
// the reference: work-groups, local memory and barriers are executed for real. $EKB_SCHEDULE_SEED
// varies the seed, $EKB_GPU_SCHEDULE_CASES the number of schedules (default 12).
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <random>
#include <set>

#include "../lower/lower_test_util.h"
#include "codegen/opencl_emitter.h"
#include "eval/eval_test_util.h"
#include "eval/solution_set.h"
#include "lower/lower.h"
#include "lower/schedule_loops.h"
#include "runtime/opencl_backend.h"
#include "test_paths.h"

namespace ekb::codegen {
namespace {

struct Rng {
  std::mt19937_64 g;
  int64_t pick(int64_t n) { return static_cast<int64_t>(g() % static_cast<uint64_t>(n)); }
  template <class T>
  const T& one_of(const std::vector<T>& xs) {
    return xs[static_cast<size_t>(pick(static_cast<int64_t>(xs.size())))];
  }
};

std::string tail(Rng& r, int64_t extent, int64_t factor) {
  // shift_inwards needs an extent of at least the factor; guard always applies.
  if (extent >= factor && r.pick(2)) return ", tail=shift_inwards";
  return "";
}

// One random case: the module text (pattern, workload, schedule gpu, memory gpu).
std::string random_case(Rng& r, int kind) {
  const std::vector<int64_t> factors = {1, 2, 3, 4, 8, 16};
  auto f = [&] { return r.one_of(factors); };
  std::string head = "pattern nn.t {\n  level operator\n  source \"test\"\n";
  if (kind == 0) {  // elementwise over a 2-D tensor
    int64_t m = 1 + r.pick(40), n = 1 + r.pick(40), fi = f(), fj = f();
    std::string s = "schedule gpu {\n  split(y, i, " + std::to_string(fi) + ", io, ii" + tail(r, m, fi) + ")\n" +
                    "  split(y, j, " + std::to_string(fj) + ", jo, ji" + tail(r, n, fj) + ")\n" +
                    "  reorder(y, io, jo, ii, ji)\n";
    const bool swap = r.pick(2);
    s += std::string("  bind(y, io, block.") + (swap ? "x" : "y") + ")\n  bind(y, jo, block." + (swap ? "y" : "x") +
         ")\n";
    if (r.pick(4)) s += std::string("  bind(y, ii, thread.") + (swap ? "x" : "y") + ")\n";
    if (r.pick(4)) s += std::string("  bind(y, ji, thread.") + (swap ? "y" : "x") + ")\n";
    return head + "  params M, N\n  input x : f32[M, N] in [-1, 1]\n  input w : f32[N] in [-1, 1]\n" +
           "  output y : f32[M, N]\n  y[i, j] = x[i, j] * w[j] + 1.0\n}\nworkload w { M = " + std::to_string(m) +
           ", N = " + std::to_string(n) + " }\n" + s + "}\n";
  }
  if (kind == 1) {  // GEMM: one output per thread, k in steps through optional
                    // shared panels
    int64_t m = 1 + r.pick(40), n = 1 + r.pick(40), k = 1 + r.pick(40), ti = f(), tj = f(), tk = f();
    std::string s = "schedule gpu {\n  split(C, i, " + std::to_string(ti) + ", bi, ti" + tail(r, m, ti) + ")\n" +
                    "  split(C, j, " + std::to_string(tj) + ", bj, tj" + tail(r, n, tj) + ")\n" + "  split(C, k, " +
                    std::to_string(tk) + ", ko, ki)\n  reorder(C, bi, bj, ti, tj)\n" +
                    "  bind(C, bi, block.y)\n  bind(C, bj, block.x)\n  bind(C, "
                    "ti, thread.y)\n  bind(C, tj, thread.x)\n";
    if (r.pick(2)) s += "  unroll(C, ki, " + std::to_string(tk) + ")\n";
    s += "}\n";
    std::string mem;
    if (r.pick(3)) mem += "  cache_read(A, C, ko, shared, As)\n";
    if (r.pick(3)) mem += "  cache_read(B, C, ko, shared, Bs)\n";
    // Two alternating panels, the next one loaded before this one's products.
    if (mem.find("As") != std::string::npos && r.pick(2)) mem += "  double_buffer(As)\n";
    if (mem.find("Bs") != std::string::npos && r.pick(2)) mem += "  double_buffer(Bs)\n";
    if (!mem.empty()) s += "memory gpu {\n" + mem + "}\n";
    return head + "  params M, N, K\n  input A : f32[M, K] in [-1, 1]\n  input B : f32[K, N] in [-1, 1]\n" +
           "  output C : f32[M, N]\n  C[i, j] = sum(k in 0..K: A[i, k] * B[k, j])\n}\nworkload w { M = " +
           std::to_string(m) + ", N = " + std::to_string(n) + ", K = " + std::to_string(k) + " }\n" + s;
  }
  if (kind == 3) {  // a cooperative row reduction (a reduction loop bound to threads), in one kernel or two
    int64_t m = 1 + r.pick(20), n = 1 + r.pick(150);
    const std::vector<int64_t> widths = {1, 3, 8, 32, 64, 96};
    int64_t tw = r.one_of(widths), rw = r.one_of(widths);
    const std::string op = r.one_of(std::vector<std::string>{"sum", "max", "min"});
    const std::string axis = r.pick(2) ? "x" : "y";
    std::string s = "schedule gpu {\n  split(y, j, " + std::to_string(tw) + ", jo, ji)\n  reorder(y, i, ji, jo)\n" +
                    "  bind(y, i, block.x)\n  bind(y, ji, thread." + axis + ")\n";
    const bool fused = r.pick(3) != 0;
    if (fused) s += "  compute_at(s, y, i)\n";
    s += "  split(s, j, " + std::to_string(rw) + ", jo, ji)\n  reorder(s, ji, jo)\n";
    if (!fused) s += "  bind(s, i, block.x)\n";  // a kernel of its own: the block's first thread stores s[i]
    s += "  bind(s, ji, thread." + axis + ")\n}\n";
    if (fused && r.pick(2)) s += "memory gpu {\n  cache_read(x, y, i, shared, xs)\n}\n";
    return head + "  params M, N\n  input x : f32[M, N] in [-1, 1]\n  output y : f32[M, N]\n  temp s : f32[M]\n" +
           "  s[i] = " + op + "(j in 0..N: x[i, j])\n  y[i, j] = x[i, j] - s[i]\n}\nworkload w { M = " +
           std::to_string(m) + ", N = " + std::to_string(n) + " }\n" + s;
  }
  // A row sum: lanes of partial sums (rfactor) on threads, the rows' sums in the next kernel.
  int64_t m = 1 + r.pick(30), n = 1 + r.pick(200), lanes = r.one_of(std::vector<int64_t>{2, 8, 32}), fr = f();
  std::string s = "schedule gpu {\n  split(s, j, " + std::to_string(lanes) + ", jo, ji)\n  rfactor(s, ji, sf)\n" +
                  "  bind(sf, i, block.x)\n  bind(sf, sf, thread.x)\n  split(s, i, " + std::to_string(fr) + ", io, ii" +
                  tail(r, m, fr) + ")\n  bind(s, io, block.x)\n  bind(s, ii, thread.x)\n}\n";
  return head + "  params M, N\n  input x : f32[M, N] in [-1, 1]\n  output s : f32[M]\n" +
         "  s[i] = sum(j in 0..N: x[i, j])\n}\nworkload w { M = " + std::to_string(m) + ", N = " + std::to_string(n) +
         " }\n" + s;
}

TEST(GpuScheduleProperty, RandomSchedulesAreRefusedOrCorrectOnAnOpenCLDevice) {
  std::string why;
  runtime::OpenCLBackend* cl = ekb::testing::test_opencl_backend(&why);
  if (!cl) GTEST_SKIP() << "no OpenCL device: " << why;
  const char* seed_env = std::getenv("EKB_SCHEDULE_SEED");
  const char* cases_env = std::getenv("EKB_GPU_SCHEDULE_CASES");
  Rng r{std::mt19937_64(seed_env ? std::stoull(seed_env) : 2026)};
  const int cases = cases_env ? std::stoi(cases_env) : 12;
  const std::filesystem::path dir = ekb::testing::private_temp_path("ekb_gpu_schedule_property");
  std::filesystem::create_directories(dir / "nn.t");
  int accepted = 0, refused = 0;
  std::set<std::string> reasons;
  for (int n = 0; n < cases; ++n) {
    const std::string text = random_case(r, n % 4);
    auto loaded = ir::testing::load(text);
    ASSERT_TRUE(loaded.inst) << loaded.diags << "\n" << text;
    try {
      lower::lower(*loaded.inst, lower::lower_options_for(ir::Target::OpenCL));
    } catch (const lower::ScheduleError& e) {
      ++refused;  // refused, saying why: fine
      const std::string message = e.what();
      EXPECT_NE(message.find("error:"), std::string::npos) << message;
      reasons.insert(message.substr(0, message.find('\n')));
      continue;
    }
    ++accepted;
    const std::string path = (dir / "nn.t" / "w.ekb").string();
    std::ofstream(path) << text;
    eval::CandidateRef c;
    c.solution = "nn.t/w.ekb";
    c.path = path;
    eval::WorkloadReference ref(*loaded.inst);
    runtime::Source scheduled = eval::candidate_source(c, *loaded.inst, ir::Target::OpenCL);
    runtime::Source native = eval::native_baseline_source(*loaded.inst, ir::Target::OpenCL);
    eval::EvalOptions options = ekb::testing::fast_options();
    options.time = false;
    options.call_timeout_s = 60;
    eval::CandidateResult res = eval::evaluate(*cl, ref, scheduled, native, options);
    EXPECT_TRUE(res.correct) << eval::error_kind_name(res.error) << ": " << res.message << "\n"
                             << text << "\n"
                             << scheduled.text;
  }
  std::filesystem::remove_all(dir);
  EXPECT_GT(accepted, 0) << "every random schedule was refused";
  std::cout << accepted << " random GPU schedules run, " << refused << " refused:\n";
  for (const std::string& r : reasons) std::cout << "  " << r << "\n";
}

}  // namespace
}  // namespace ekb::codegen
