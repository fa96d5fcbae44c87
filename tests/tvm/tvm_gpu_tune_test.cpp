// GPU tuning as a batch (docs/TVM.md, "GPU tuning"): schedules sampled from MetaSchedule's design
// space become candidates (here), `ekb eval` measures them (on PoCL here, the device there),
// `ekb tvm-tune select` keeps the fastest correct one as a record, and `tvm-tuned` on a gpu
// backend uses that record, or refuses naming the script that makes records.
#include <gtest/gtest.h>

#include <filesystem>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>

#include "eval/eval_test_util.h"
#include "run_ekb.h"
#include "runtime/cuda_backend.h"
#include "test_paths.h"
#include "tvm/gpu_tuning.h"
#include "tvm/tvm_compiler.h"
#include "tvm_test_util.h"

namespace {

using ekb::testing_cli::run_ekb;
using ekb::testing_cli::slurp;
namespace fs = std::filesystem;

using ekb::tvm::testing::bind;
using ekb::tvm::testing::contains;

bool have_pocl() {
  static const bool ok = run_ekb("eval --backend opencl --platform pocl -s native --no-timing linalg.gemm/mini").code == 0;
  return ok;
}

std::string test_name(const ::testing::TestParamInfo<std::string>& info) {
  std::string n = info.param;
  for (char& c : n)
    if (!isalnum(static_cast<unsigned char>(c))) c = '_';
  return n;
}

// Every sampled candidate is a different program that nvcc compiles for sm_90, launched by an
// ekb_main with the ABI's stream.
class TvmGpuTuneCuda : public ::testing::TestWithParam<std::string> {};

TEST_P(TvmGpuTuneCuda, SampledCandidatesAreDistinctAndCompileWithNvccForSm90) {
  if (ekb::runtime::find_nvcc().empty()) GTEST_SKIP() << "nvcc is not installed";
  ekb::tvm::GpuCandidates c = ekb::tvm::gpu_candidates(bind(GetParam()), ekb::ir::Target::Cuda, 3, 0);
  ASSERT_FALSE(c.candidates.empty()) << c.note << " " << c.rejected;
  ekb::runtime::CudaBackendOptions o;
  o.cache_dir = ekb::testing::test_cache_dir();
  o.arch = "sm_90";
  ekb::runtime::CudaBackend backend(o);
  std::set<std::string> sources, traces;
  for (const auto& cand : c.candidates) {
    sources.insert(cand.source);
    traces.insert(cand.trace_hash);
    EXPECT_TRUE(contains(cand.source, "cudaStream_t stream")) << cand.source;
    EXPECT_TRUE(contains(cand.trace, "sch.")) << cand.trace;
    ekb::runtime::Source s;
    s.language = ekb::runtime::Language::Cuda;
    s.text = cand.source;
    ekb::runtime::CompileOutcome out = backend.compile(s);
    EXPECT_TRUE(out.ok) << out.message << "\n" << out.log << "\n" << cand.source;
  }
  EXPECT_EQ(sources.size(), c.candidates.size());
  EXPECT_EQ(traces.size(), c.candidates.size());
}

INSTANTIATE_TEST_SUITE_P(Kinds, TvmGpuTuneCuda,
                         ::testing::Values("nn.softmax/kws_1x12",                      // temps shared by kernels
                                           "linalg.gemm/rect_96x64x128",               // tiles in shared memory
                                           "nn.add_relu/resnet50_14x14x1024_f16"),     // half conversions
                         test_name);

// The temps that outlive a kernel are in the scratch workspace the harness allocates.
TEST(TvmGpuTune, TempsSharedByKernelsAreInTheScratchWorkspace) {
  ekb::tvm::GpuCandidates c = ekb::tvm::gpu_candidates(bind("nn.softmax/kws_1x12"), ekb::ir::Target::Cuda, 3, 0);
  ASSERT_EQ(c.candidates.size(), 3u) << c.note << " " << c.rejected;
  for (const auto& cand : c.candidates) {
    EXPECT_TRUE(contains(cand.source, "extern \"C\" int64_t ekb_scratch_bytes(")) << cand.source;
    EXPECT_TRUE(contains(cand.source, "(char*)scratch + 256")) << cand.source;
  }
}

// A workload with an ordered update has no block form: no candidates, and the reason.
TEST(TvmGpuTune, AWorkloadWithoutABlockFormHasNoCandidatesAndSaysWhy) {
  ekb::tvm::GpuCandidates c = ekb::tvm::gpu_candidates(bind("audio.biquad_df2t/block_2x32"), ekb::ir::Target::Cuda, 3, 0);
  EXPECT_TRUE(c.candidates.empty());
  EXPECT_TRUE(contains(c.note, "not all pure definitions")) << c.note;
}

TEST(TvmGpuTune, ARecordIsFoundOnlyForItsWorkloadDeviceBackendAndCount) {
  const std::string root = ekb::testing::private_temp_path("gpu_records");
  ekb::tvm::GpuTuningRecord r;
  r.workload = "nn.softmax/kws_1x12";
  r.device = "Some GPU";
  r.backend = "cuda";
  r.candidates = 8;
  r.sample = 2;
  r.source = "/* the chosen kernel */";
  r.time_ms = 0.5;
  ekb::tvm::write_gpu_record(root, r);
  auto back = ekb::tvm::read_gpu_record(root, r.workload, r.device, ekb::ir::Target::Cuda, 8);
  ASSERT_TRUE(back);
  EXPECT_EQ(back->source, r.source);
  EXPECT_EQ(back->sample, 2);
  EXPECT_FALSE(ekb::tvm::read_gpu_record(root, r.workload, "Another GPU", ekb::ir::Target::Cuda, 8));
  EXPECT_FALSE(ekb::tvm::read_gpu_record(root, r.workload, r.device, ekb::ir::Target::OpenCL, 8));
  EXPECT_FALSE(ekb::tvm::read_gpu_record(root, r.workload, r.device, ekb::ir::Target::Cuda, 4));
  EXPECT_FALSE(ekb::tvm::read_gpu_record(root, "nn.softmax/mbert_128x512", r.device, ekb::ir::Target::Cuda, 8));
  fs::remove_all(root);
}

nlohmann::json read_json(const std::string& path) { return nlohmann::json::parse(std::ifstream(path)); }

// $EKB_CACHE_DIR for the ekb processes a test starts, restored when it ends.
class ScopedCacheDir {
 public:
  explicit ScopedCacheDir(const std::string& dir) {
    if (const char* old = std::getenv("EKB_CACHE_DIR")) old_ = old;
    ::setenv("EKB_CACHE_DIR", dir.c_str(), 1);
  }
  ~ScopedCacheDir() {
    if (old_) ::setenv("EKB_CACHE_DIR", old_->c_str(), 1);
    else ::unsetenv("EKB_CACHE_DIR");
  }

 private:
  std::optional<std::string> old_;
};

// Without a record for the device, tvm-tuned on a gpu backend is refused, naming the script.
TEST(TvmGpuTuneCli, TvmTunedWithoutARecordIsRefusedNamingTheScript) {
  if (!have_pocl()) GTEST_SKIP() << "no PoCL platform here";
  const fs::path root = ekb::testing::private_temp_path("gpu_tune_missing");
  ScopedCacheDir scoped((root / "cache").string());
  for (const std::string how : {"-s native --baseline tvm-tuned", "-s tvm-tuned"}) {
    auto r = run_ekb("eval -b opencl --platform pocl " + how + " --tune-trials 3 --no-timing --db " +
                     (root / "r.db").string() + " nn.softmax/kws_1x12");
    EXPECT_NE(r.code, 0) << how;
    EXPECT_TRUE(contains(r.err, "bench/tvm_gpu_tune.sh")) << how << ": " << r.err;
    EXPECT_TRUE(contains(r.err, "nn.softmax/kws_1x12")) << how << ": " << r.err;
  }
  fs::remove_all(root);
}

// The whole batch on PoCL: K = 3 candidates, a timed evaluation, the selection, and then
// `--baseline tvm-tuned` and `-s tvm-tuned` use exactly the selected sample's source.
TEST(TvmGpuTuneCli, CandidatesAreEvaluatedSelectedAndTheSelectedOneIsTheTunedBaseline) {
  if (!have_pocl()) GTEST_SKIP() << "no PoCL platform here";
  const std::string w = "nn.softmax/kws_1x12";
  const fs::path root = ekb::testing::private_temp_path("gpu_tune_cli");
  const fs::path dir = root / "candidates";
  const std::string cache = (root / "cache").string();
  auto gen = run_ekb("tvm-tune candidates -b opencl -k 3 -o " + dir.string() + " " + w);
  ASSERT_EQ(gen.code, 0) << gen.err;
  for (int n = 0; n <= 3; ++n) {
    EXPECT_TRUE(fs::exists(dir / "nn.softmax" / ("kws_1x12.s" + std::to_string(n) + ".cl"))) << n << gen.err;
    EXPECT_TRUE(fs::exists(dir / "nn.softmax" / ("kws_1x12.s" + std::to_string(n) + ".meta.json"))) << n;
  }
  EXPECT_FALSE(read_json((dir / "nn.softmax" / "kws_1x12.s1.meta.json").string()).value("trace_hash", "").empty());

  const std::string results = (root / "tuning.json").string();
  auto eval = run_ekb("eval -b opencl --platform pocl -s " + dir.string() + " --min-time 0.01 --db " +
                      (root / "r.db").string() + " --json " + results + " " + w);
  ASSERT_EQ(eval.code, 0) << eval.err;
  nlohmann::json doc = read_json(results);
  ASSERT_EQ(doc["results"].size(), 4u) << doc.dump();
  // The fastest correct sample, as select must find it.
  std::string best;
  double best_ms = 1e300;
  int best_sample = -1;
  for (const auto& r : doc["results"])
    if (r["correct"].get<bool>() && r["time_ms"]["median"].get<double>() < best_ms) {
      best_ms = r["time_ms"]["median"].get<double>();
      best = r["solution"].get<std::string>();
      best_sample = r["sample"].get<int>();
    }
  ASSERT_GE(best_sample, 0) << doc.dump();

  auto select = run_ekb("tvm-tune select " + results + " --records " + cache + "/tvm-records");
  ASSERT_EQ(select.code, 0) << select.err;
  EXPECT_TRUE(contains(select.out, "geomean over 1 workloads")) << select.out;
  const std::string device = doc["device"]["name"].get<std::string>();
  auto record = ekb::tvm::read_gpu_record(cache + "/tvm-records", w, device, ekb::ir::Target::OpenCL, 3);
  ASSERT_TRUE(record) << select.out;
  EXPECT_EQ(record->sample, best_sample);
  EXPECT_EQ(record->source, slurp((dir / best).string()));

  // The records' root is <cache>/tvm-records: this run's cache holds the record just written.
  ScopedCacheDir scoped(cache);
  const std::string used = (root / "used.json").string();
  auto as_baseline = run_ekb("eval -b opencl --platform pocl -s native --baseline tvm-tuned --tune-trials 3 "
                             "--min-time 0.01 --db " + (root / "u.db").string() + " --json " + used + " " + w);
  ASSERT_EQ(as_baseline.code, 0) << as_baseline.err;
  nlohmann::json u = read_json(used);
  ASSERT_EQ(u["results"].size(), 1u);
  const auto& b = u["results"][0]["baseline"];
  EXPECT_EQ(b["compiler"], "tvm-tuned") << b.dump();
  EXPECT_EQ(b["records"], record->hash()) << b.dump();
  EXPECT_EQ(b["tuned"].get<bool>(), best_sample > 0) << b.dump();
  EXPECT_TRUE(u["results"][0]["correct"].get<bool>()) << u["results"][0].dump();
  EXPECT_TRUE(u["results"][0]["speedup"].is_number()) << u["results"][0].dump();

  const std::string as_solution_json = (root / "solution.json").string();
  auto as_solution = run_ekb("eval -b opencl --platform pocl -s tvm-tuned --tune-trials 3 --no-timing --db " +
                             (root / "s.db").string() + " --json " + as_solution_json + " " + w);
  ASSERT_EQ(as_solution.code, 0) << as_solution.err;
  nlohmann::json s = read_json(as_solution_json);
  ASSERT_EQ(s["results"].size(), 1u);
  EXPECT_EQ(s["results"][0]["solution"], "tvm:tuned");
  EXPECT_TRUE(s["results"][0]["correct"].get<bool>()) << s["results"][0].dump();
  fs::remove_all(root);
}

}  // namespace
