// `ekb eval --baseline native|tvm|tvm-tuned` (docs/EVALUATION.md, "Baselines"): what every
// candidate's speedup is measured against, and its description stored with every result.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "codegen/suite_params.h"
#include "eval/baseline.h"
#include "run_ekb.h"
#include "suite/suite.h"
#include "test_paths.h"
#include "tvm/tvm_compiler.h"
#include "tvm_test_util.h"

namespace {

using ekb::testing_cli::run_ekb;
namespace fs = std::filesystem;

using ekb::tvm::testing::bind;
using ekb::tvm::testing::contains;
using ekb::tvm::testing::write_stand_in_bridge;

TEST(Baseline, TheNamesAreKnownAndOthersAreNot) {
  EXPECT_EQ(ekb::eval::parse_baseline_compiler("native"), ekb::eval::BaselineCompiler::Native);
  EXPECT_EQ(ekb::eval::parse_baseline_compiler("tvm"), ekb::eval::BaselineCompiler::Tvm);
  EXPECT_EQ(ekb::eval::parse_baseline_compiler("tvm-tuned"), ekb::eval::BaselineCompiler::TvmTuned);
  EXPECT_FALSE(ekb::eval::parse_baseline_compiler("gcc"));
}

TEST(Baseline, TheTvmBaselineIsTvmsArtifactAndSaysWhichTvm) {
  ekb::eval::Baseline b =
      ekb::eval::make_baseline(bind("linalg.gemm/mini"), ekb::ir::Target::Cpu, {ekb::eval::BaselineCompiler::Tvm});
  ASSERT_TRUE(b.error.empty()) << b.error;
  EXPECT_EQ(b.source.origin, ekb::tvm::kTvmDefault);
  EXPECT_TRUE(contains(b.source.text, "__asm__(")) << "not TVM's assembly in its shim";
  EXPECT_EQ(b.info.compiler, "tvm");
  EXPECT_FALSE(b.info.version.empty());
}

TEST(BaselineCli, AnUnknownBaselineIsRefused) {
  const std::string dir = ekb::testing::private_temp_path("baseline_unknown");
  auto r = run_ekb("eval -s native --baseline gcc --no-timing --db " + dir + "/r.db linalg.gemm/mini");
  EXPECT_NE(r.code, 0);
  EXPECT_TRUE(contains(r.err, "unknown baseline 'gcc'")) << r.err;
  EXPECT_TRUE(contains(r.err, "native, tvm, tvm-tuned")) << r.err;
  fs::remove_all(dir);
}

// A bridge standing in for TVM whose "artifact" is the native kernel plus a spin of a few
// milliseconds: evaluated against it, the native default must come out much faster than 1x. Were
// the speedup measured against the native baseline, it would be about 1x.
TEST(BaselineCli, SpeedupsAreMeasuredAgainstTheTvmArtifactAndTheBaselineIsRecorded) {
  const fs::path root = ekb::testing::private_temp_path("baseline_slow_bridge");
  fs::create_directories(root / "ekb_tvm");
  auto emitted = run_ekb("emit linalg.gemm/mini");
  ASSERT_EQ(emitted.code, 0) << emitted.err;
  std::string slow = emitted.out;
  const size_t body = slow.find('{', slow.find("void ekb_main("));
  ASSERT_NE(body, std::string::npos) << slow;
  slow.insert(body + 1, "\n  { volatile long ekb_spin = 0; while (ekb_spin < 3000000) ++ekb_spin; }\n");
  std::ofstream(root / "slow.c") << slow;
  write_stand_in_bridge(root, "source = open('" + (root / "slow.c").string() + "').read()\n"
                              "json.dump({'ok': True, 'source': source, 'tvm_version': '0.0-slow'}, open(result, 'w'))");
  const std::string json = (root / "results.json").string();
  // The child ekb finds the bridge and a cache of its own through the environment.
  setenv("EKB_TVM_BRIDGE", root.c_str(), 1);
  setenv("EKB_CACHE_DIR", (root / "cache").c_str(), 1);
  auto res = run_ekb("eval -s native --baseline tvm --min-time 0.02 --db " + (root / "r.db").string() + " --json " +
                     json + " linalg.gemm/mini");
  unsetenv("EKB_TVM_BRIDGE");
  unsetenv("EKB_CACHE_DIR");
  ASSERT_EQ(res.code, 0) << res.err;
  nlohmann::json doc = nlohmann::json::parse(std::ifstream(json));
  ASSERT_EQ(doc["results"].size(), 1u) << doc.dump();
  const auto& result = doc["results"][0];
  ASSERT_TRUE(result["correct"].get<bool>()) << result.dump();
  EXPECT_EQ(result["baseline"]["compiler"], "tvm");
  EXPECT_EQ(result["baseline"]["version"], "0.0-slow");
  EXPECT_EQ(doc["run"]["options"]["baseline"], "tvm");
  ASSERT_TRUE(result["speedup"].is_number()) << result.dump();
  EXPECT_GT(result["speedup"].get<double>(), 10.0) << "measured against the native kernel, not TVM's";
  EXPECT_TRUE(contains(res.out, "baseline tvm 0.0-slow")) << res.out;
  fs::remove_all(root);
}

// MetaSchedule with a tiny budget on a small pure workload (a reduction and an elementwise
// epilogue): a tuned artifact that passes the full protocol, records kept under the cache, and a
// second compile that applies them without searching again.
TEST(TvmTuning, ASmallPureWorkloadIsTunedOnceAndItsRecordsAreReused) {
  const fs::path cache = ekb::testing::private_temp_path("tvm_tuning");
  ekb::tvm::TvmOptions o = ekb::tvm::default_options();
  o.cache_dir = cache.string();
  o.tune_trials = 4;
  const ekb::ir::Instance inst = bind("linalg.gemm/mini");
  const ekb::tvm::TvmOutput first = ekb::tvm::compile(inst, ekb::ir::Target::Cpu, o);
  ASSERT_TRUE(first.tuning);
  ASSERT_TRUE(first.tuning->tuned) << first.tuning->note;
  EXPECT_TRUE(first.tuning->tuned_now);
  EXPECT_EQ(first.tuning->trials, 4);
  EXPECT_FALSE(first.tuning->records.empty());
  EXPECT_EQ(first.source.origin, ekb::tvm::kTvmTuned);
  EXPECT_TRUE(contains(first.tvmscript, "T.sblock")) << "not the block form: " << first.tvmscript;
  EXPECT_TRUE(fs::exists(fs::path(ekb::tvm::records_dir(o, first.key)) / "database_tuning_record.json"));

  // The compiled result forgotten, the records kept: the bridge runs again and applies them.
  fs::remove_all(cache / "tvm");
  const ekb::tvm::TvmOutput second = ekb::tvm::compile(inst, ekb::ir::Target::Cpu, o);
  ASSERT_TRUE(second.tuning);
  EXPECT_FALSE(second.cached);
  EXPECT_TRUE(second.tuning->tuned);
  EXPECT_FALSE(second.tuning->tuned_now) << "tuned again instead of applying the records";
  EXPECT_EQ(second.tuning->records, first.tuning->records);
  EXPECT_EQ(second.source.text, first.source.text);

  // Through `ekb eval` with the same cache: the tuned artifact passes the full protocol, and as a
  // baseline it is recorded with its budget and records.
  setenv("EKB_CACHE_DIR", cache.c_str(), 1);
  const std::string json = (cache / "results.json").string();
  auto r = run_ekb("eval -s tvm-tuned --tune-trials 4 --no-timing --db " + (cache / "r.db").string() + " --json " + json +
                   " linalg.gemm/mini");
  const std::string json2 = (cache / "results2.json").string();
  auto r2 = run_ekb("eval -s native --baseline tvm-tuned --tune-trials 4 --no-timing --db " + (cache / "r.db").string() +
                    " --json " + json2 + " linalg.gemm/mini");
  unsetenv("EKB_CACHE_DIR");
  ASSERT_EQ(r.code, 0) << r.err;
  const auto tuned = nlohmann::json::parse(std::ifstream(json))["results"][0];
  EXPECT_EQ(tuned["solution"], "tvm:tuned");
  EXPECT_TRUE(tuned["correct"].get<bool>()) << tuned.dump();
  ASSERT_EQ(r2.code, 0) << r2.err;
  const auto against = nlohmann::json::parse(std::ifstream(json2))["results"][0];
  EXPECT_TRUE(against["correct"].get<bool>()) << against.dump();
  EXPECT_EQ(against["baseline"]["compiler"], "tvm-tuned");
  EXPECT_EQ(against["baseline"]["tuned"], true);
  EXPECT_EQ(against["baseline"]["tune_trials"], 4);
  EXPECT_EQ(against["baseline"]["records"], first.tuning->records);
  fs::remove_all(cache);
}

// MetaSchedule measures each candidate in a process of its own: a kernel that calls the shim's
// helpers (reflect borders: ekb_tvm_mirror_index) needs them linked into each candidate. Before,
// every trial's process died ("LocalRunner: Subprocess terminated") and nothing was tuned.
TEST(TvmTuning, AKernelThatCallsTheShimsHelpersIsMeasuredAndTuned) {
  ekb::tvm::TvmOptions o = ekb::tvm::default_options();
  o.cache_dir = ekb::testing::private_temp_path("tvm_tuning_helpers");
  o.tune_trials = 2;
  const ekb::tvm::TvmOutput out = ekb::tvm::compile(bind("img.gaussian3x3/vww_96x96_u8"), ekb::ir::Target::Cpu, o);
  ASSERT_TRUE(out.tuning);
  EXPECT_TRUE(out.tuning->tuned) << out.tuning->note;
  EXPECT_TRUE(contains(out.tvmscript, "ekb_tvm_mirror_index")) << "no longer calls a helper: test another workload";
  fs::remove_all(o.cache_dir);
}

// Candidates measured as ekb measures kernels: an f16 kernel's half conversions linked into each
// candidate (before: an undefined ekb_f16_to_f32 killed every trial) and a gather's indices drawn
// inside their declared range (before: the ranges were matched to no parameter, random int32
// delays read out of bounds and every trial died). Both ended in "no valid schedule".
class TvmTuningInputs : public ::testing::TestWithParam<const char*> {};

TEST_P(TvmTuningInputs, TrialsRunAndTheWorkloadIsTuned) {
  ekb::tvm::TvmOptions o = ekb::tvm::default_options();
  o.cache_dir = ekb::testing::private_temp_path("tvm_tuning_inputs");
  o.tune_trials = 2;
  const ekb::tvm::TvmOutput out = ekb::tvm::compile(bind(GetParam()), ekb::ir::Target::Cpu, o);
  ASSERT_TRUE(out.tuning);
  EXPECT_TRUE(out.tuning->tuned) << out.tuning->note;
  fs::remove_all(o.cache_dir);
}

INSTANTIATE_TEST_SUITE_P(HalfAndGather, TvmTuningInputs,
                         ::testing::Values("linalg.dot/n256_f16", "audio.fir_sparse/cmsis_32x8"),
                         [](const auto& info) { return std::string(info.index == 0 ? "Half" : "Gather"); });

// A search that runs past the bridge's limit (a whole model graph as one PrimFunc: MetaSchedule
// builds every candidate of it) leaves the workload with the untuned translation and a note, not a
// failed compile; the outcome is cached under the tuned request, so the search is not paid again.
TEST(TvmTuning, ASearchPastTheBridgesLimitFallsBackToTheUntunedTranslationOnce) {
  const fs::path root = ekb::testing::private_temp_path("tvm_tuning_timeout");
  write_stand_in_bridge(root, "req = json.load(open(request))\n"
                              "open('" + (root / "requests.log").string() + "', 'a').write('tune\\n' if 'tune' in req else 'plain\\n')\n"
                              "if 'tune' in req:\n"
                              "    import time; time.sleep(120)\n"
                              "json.dump({'ok': True, 'source': '/* untuned */', 'tvm_version': '0.0-stand-in'}, open(result, 'w'))");
  ekb::tvm::TvmOptions o = ekb::tvm::default_options();
  o.bridge_dir = root.string();
  o.cache_dir = (root / "cache").string();
  o.tune_trials = 4;
  o.timeout_s = 3;
  const ekb::ir::Instance inst = bind("linalg.gemm/mini");
  const ekb::tvm::TvmOutput first = ekb::tvm::compile(inst, ekb::ir::Target::Cpu, o);
  ASSERT_TRUE(first.tuning);
  EXPECT_FALSE(first.tuning->tuned);
  EXPECT_TRUE(contains(first.tuning->note, "ran past the bridge's limit of 3 s")) << first.tuning->note;
  EXPECT_EQ(first.source.text, "/* untuned */");
  const ekb::tvm::TvmOutput second = ekb::tvm::compile(inst, ekb::ir::Target::Cpu, o);
  EXPECT_TRUE(second.cached);
  ASSERT_TRUE(second.tuning);
  EXPECT_FALSE(second.tuning->tuned);
  std::ifstream log(root / "requests.log");
  const std::string requests((std::istreambuf_iterator<char>(log)), std::istreambuf_iterator<char>());
  EXPECT_EQ(requests, "tune\nplain\n") << "the search was asked for again";
  fs::remove_all(root);
}

// Ordered updates have no block form: the workload is built untuned, saying why, and nothing is
// searched.
TEST(TvmTuning, AWorkloadWithOrderedUpdatesFallsBackToTheUntunedTranslationAndSaysWhy) {
  ekb::tvm::TvmOptions o = ekb::tvm::default_options();
  o.cache_dir = ekb::testing::private_temp_path("tvm_tuning_fallback");
  o.tune_trials = 4;
  const ekb::tvm::TvmOutput out = ekb::tvm::compile(bind("audio.biquad_df2t/block_2x32"), ekb::ir::Target::Cpu, o);
  ASSERT_TRUE(out.tuning);
  EXPECT_FALSE(out.tuning->tuned);
  EXPECT_FALSE(out.tuning->tuned_now);
  EXPECT_TRUE(contains(out.tuning->note, "not all pure definitions")) << out.tuning->note;
  EXPECT_TRUE(contains(out.source.text, "void ekb_main(")) << "no untuned artifact";
  EXPECT_FALSE(fs::exists(ekb::tvm::records_dir(o, out.key)));
  fs::remove_all(o.cache_dir);
}

}  // namespace
