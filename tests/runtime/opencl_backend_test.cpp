// The opencl backend end to end on an OpenCL platform (PoCL here and in CI, NVIDIA's on the GPU
// machine): device selection, compile errors that name the line, the compile cache, and the
// OpenCL corpus (tests/adversarial/opencl/) getting the verdict each file's header names. Every
// test that needs a platform skips, saying why, where there is none.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "eval/eval_test_util.h"
#include "ir/ir_test_util.h"
#include "runtime/opencl_backend.h"
#include "runtime/opencl_driver.h"
#include "runtime/worker.h"
#include "test_paths.h"

namespace ekb::eval {
namespace {

#define REQUIRE_OPENCL(backend)                                       \
  std::string why_no_opencl;                                          \
  runtime::OpenCLBackend* backend = ekb::testing::test_opencl_backend(&why_no_opencl);   \
  if (!backend) {                                                     \
    GTEST_SKIP() << "no OpenCL device: " << why_no_opencl;             \
  }                                                                   \
  static_assert(true)

EvalOptions opencl_options() {
  EvalOptions o = ekb::testing::fast_options();
  o.call_timeout_s = 20;  // PoCL runs a one-work-item stage on one core
  return o;
}

// A corpus file as `ekb eval` reads it: the source, with the workload's argument names.
runtime::Source corpus_source(const std::string& path, const WorkloadReference& ref) {
  runtime::Source s = runtime::Source::from_file(path);
  runtime::Source native = native_baseline_source(ref.instance(), ir::Target::OpenCL);
  s.tensor_names = native.tensor_names;
  s.param_names = native.param_names;
  return s;
}

class OpenCLCorpus : public ::testing::TestWithParam<std::string> {};

TEST_P(OpenCLCorpus, GetsTheRightVerdict) {
  REQUIRE_OPENCL(backend);
  std::string path = ekb::testing::adversarial_dir() + "/opencl/" + GetParam();
  std::ifstream in(path);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::string workload = ekb::testing::corpus_header(text, "workload"), expect = ekb::testing::corpus_header(text, "expect");
  WorkloadReference& ref = ekb::testing::TestWorkloads::get().reference(workload);
  EvalOptions options = opencl_options();
  if (expect == "timeout") options.call_timeout_s = 3;
  CandidateResult r = evaluate(*backend, ref, corpus_source(path, ref), native_baseline_source(ref.instance(), ir::Target::OpenCL),
                               options);
  std::string got = r.error == ErrorKind::None ? "none" : std::string(error_kind_name(r.error));
  EXPECT_EQ(got, expect) << GetParam() << ": " << r.message;
  if (expect == "none") {
    ASSERT_TRUE(r.correct) << r.message;
    ASSERT_TRUE(r.time.has_value());
    EXPECT_GT(r.time->median_ms, 0);
  }
}

INSTANTIATE_TEST_SUITE_P(Files, OpenCLCorpus, ::testing::ValuesIn(ekb::testing::corpus_files("opencl", ".cl")),
                         ekb::testing::file_test_name);

TEST(OpenCLBackend, CompileErrorsNameTheLine) {
  REQUIRE_OPENCL(backend);
  WorkloadReference& ref = ekb::testing::TestWorkloads::get().reference("linalg.gemm/small");
  const std::string dir = ekb::testing::adversarial_dir() + "/opencl/";
  runtime::CompileOutcome bad = backend->compile(corpus_source(dir + "bad_launch_size.cl", ref));
  EXPECT_FALSE(bad.ok);
  EXPECT_NE(bad.message.find("bad_launch_size.cl:14:21: error: 'C' is a tensor"), std::string::npos) << bad.message;
  runtime::CompileOutcome unknown = backend->compile(corpus_source(dir + "unknown_kernel.cl", ref));
  EXPECT_FALSE(unknown.ok);
  EXPECT_NE(unknown.message.find(":14:1: error: the program has no kernel named 'gemm_fast'"), std::string::npos)
      << unknown.message;
  runtime::CompileOutcome syntax = backend->compile(corpus_source(dir + "syntax_error.cl", ref));
  EXPECT_FALSE(syntax.ok);
  EXPECT_NE(syntax.message.find("error:"), std::string::npos) << syntax.message;
}

TEST(OpenCLBackend, ArtifactsAreCachedByContent) {
  REQUIRE_OPENCL(backend);
  WorkloadReference& ref = ekb::testing::TestWorkloads::get().reference("linalg.gemm/small");
  runtime::Source s = corpus_source(ekb::testing::adversarial_dir() + "/opencl/ok_gemm.cl", ref);
  s.text += "\n/* " + ekb::testing::private_temp_path("unique") + " */\n";  // a fresh cache key
  runtime::CompileOutcome first = backend->compile(s);
  ASSERT_TRUE(first.ok) << first.message;
  EXPECT_FALSE(first.cached);
  runtime::CompileOutcome again = backend->compile(s);
  ASSERT_TRUE(again.ok);
  EXPECT_TRUE(again.cached);
  EXPECT_EQ(again.artifact->path, first.artifact->path);
  s.param_names.back() = "K";  // other names: another program (the description binds differently)
  runtime::CompileOutcome renamed = backend->compile(s);
  EXPECT_FALSE(renamed.ok);  // NK is no longer a parameter name
  EXPECT_NE(renamed.message.find("unknown name 'NK'"), std::string::npos) << renamed.message;
}

TEST(OpenCLBackend, DevicesAreChosenByPlatformSubstringAndIndex) {
  REQUIRE_OPENCL(backend);
  const runtime::opencl::Device& d = backend->device();
  std::string upper = d.platform_name.substr(0, 4);
  for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  EXPECT_EQ(runtime::opencl::select_device({upper, d.index}).identity(), d.identity());  // case-insensitive
  try {
    runtime::opencl::select_device({"no-such-platform-xyz", 0});
    FAIL() << "selected a platform that does not exist";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("no OpenCL platform's name or version contains 'no-such-platform-xyz'"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find(d.platform_name), std::string::npos) << "lists what exists: " << e.what();
  }
  EXPECT_THROW(runtime::opencl::select_device({d.platform_name, 999}), std::runtime_error);
  EXPECT_NE(backend->device_info().name.find(d.platform_name), std::string::npos);
  if (d.is_pocl())  // its name is "Portable Computing Language": `pocl` is found in its version
    EXPECT_TRUE(runtime::opencl::select_device({"pocl", 0}).is_pocl());
}

TEST(OpenCLBackend, TheWorkerInitializesThePlatformThenConfinesItself) {
  REQUIRE_OPENCL(backend);
  runtime::WorkerOptions o;
  o.backend = ir::Target::OpenCL;
  o.device = backend->worker_device();
  o.executable = EKB_BINARY;
  o.memory_limit_bytes = 0;
  runtime::Worker w(o);  // throws if the executor could not start
  EXPECT_TRUE(w.sandbox().value("seccomp", false)) << w.sandbox().dump();
  if (::geteuid() == 0) EXPECT_TRUE(w.sandbox().value("dropped_privileges", false)) << w.sandbox().dump();
}

// The backend's choice travels to the compile step and the workers on their command lines, never
// through the environment of the process that made the backend.
TEST(OpenCLBackend, TheBackendNamesItsDeviceToTheWorkersWithoutTouchingTheEnvironment) {
  REQUIRE_OPENCL(backend);
  runtime::OpenCLBackendOptions options;
  options.device = {backend->device().platform_name.substr(0, 4), backend->device().index};  // a substring
  options.cache_dir = ekb::testing::test_cache_dir();
  auto environment = [] {
    const char* v = std::getenv("EKB_OPENCL_PLATFORM");
    return v ? std::optional<std::string>(v) : std::nullopt;
  };
  const std::optional<std::string> before = environment();
  runtime::OpenCLBackend another(options);
  EXPECT_EQ(environment(), before);
  EXPECT_EQ(another.worker_device().platform, another.device().platform_name);
  EXPECT_EQ(another.worker_device().device, another.device().index);
}

TEST(OpenCLBackend, AWorkerStartsOnTheDeviceItsOptionsName) {
  REQUIRE_OPENCL(backend);
  runtime::WorkerOptions o;
  o.backend = ir::Target::OpenCL;
  o.device = {"no-such-platform-xyz", 0};
  o.executable = EKB_BINARY;
  o.memory_limit_bytes = 0;
  try {
    runtime::Worker w(o);
    FAIL() << "a worker started on a platform that does not exist";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("no-such-platform-xyz"), std::string::npos) << e.what();
  }
}

TEST(OpenCLBackend, NativeDefaultIsCorrectAndTimedWithEvents) {
  REQUIRE_OPENCL(backend);
  for (const char* w : {"linalg.gemm/small", "nn.softmax/mbert_128x512", "audio.biquad_df1/block_2x32",
                        "audio.fir/audio48k_480x128_f16", "audio.lpc/g729_240_p10"}) {
    WorkloadReference& ref = ekb::testing::TestWorkloads::get().reference(w);
    runtime::Source native = native_baseline_source(ref.instance(), ir::Target::OpenCL);
    CandidateResult r = evaluate(*backend, ref, native, native, opencl_options());
    EXPECT_TRUE(r.correct) << w << ": " << error_kind_name(r.error) << ": " << r.message;
    if (r.correct) {
      EXPECT_GT(r.time->median_ms, 0) << w;
    }
  }
}

TEST(OpenCLBackend, Bf16TensorsAreBitPatternsConvertedInTheKernel) {
  // No suite workload is bf16: a small pattern of its own (ushort bits in, rounded bits out).
  REQUIRE_OPENCL(backend);
  auto loaded = ir::testing::load(
      "pattern nn.bf16_relu6_test {\n"
      "  level operator\n  source \"test\"\n  summary \"relu6 in bf16\"\n"
      "  types T\n  params N\n"
      "  input x : T[N] in [-8, 8]\n  output y : T[N]\n"
      "  y[i] = min(max(x[i], 0.0), 6.0) * 1.1\n}\n"
      "workload tiny micro { N = 1000, T = bf16 }\n");
  ASSERT_TRUE(loaded.inst) << loaded.diags;
  WorkloadReference ref(*loaded.inst);
  runtime::Source native = native_baseline_source(ref.instance(), ir::Target::OpenCL);
  EXPECT_NE(native.text.find("__global const ushort* restrict x"), std::string::npos) << native.text;
  EXPECT_NE(native.text.find("ekb_f32_to_bf16("), std::string::npos) << native.text;
  EvalOptions options = opencl_options();
  options.time = false;
  CandidateResult r = evaluate(*backend, ref, native, native, options);
  EXPECT_TRUE(r.correct) << error_kind_name(r.error) << ": " << r.message << "\n" << native.text;
}

TEST(OpenCLBackend, ACrashDoesNotLeakIntoTheNextCandidate) {
  REQUIRE_OPENCL(backend);
  WorkloadReference& ref = ekb::testing::TestWorkloads::get().reference("linalg.gemm/small");
  runtime::Source base = native_baseline_source(ref.instance(), ir::Target::OpenCL);
  std::string dir = ekb::testing::adversarial_dir() + "/opencl/";
  CandidateResult crash = evaluate(*backend, ref, corpus_source(dir + "wild_write.cl", ref), base, opencl_options());
  EXPECT_EQ(crash.error, ErrorKind::Crash) << crash.message;
  CandidateResult ok = evaluate(*backend, ref, corpus_source(dir + "ok_gemm.cl", ref), base, opencl_options());
  EXPECT_TRUE(ok.correct) << ok.message;
}

}  // namespace
}  // namespace ekb::eval
