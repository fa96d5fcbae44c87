// The cuda backend end to end on a GPU: the native default lowering is correct under the whole
// protocol, and the CUDA corpus (tests/adversarial/cuda/) gets the verdict each file's header
// names: device-side overruns, input writes, work left on another stream and sticky errors (the
// worker replaced) are caught. Every test skips, saying why, on a machine without a CUDA device.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "eval/eval_test_util.h"
#include "runtime/cuda_backend.h"
#include "runtime/cuda_driver.h"

namespace ekb::eval {
namespace {

runtime::CudaBackend* gpu_backend(std::string* why) {
  static std::string reason;
  static std::unique_ptr<runtime::CudaBackend> backend = [] {
    try {
      runtime::CudaBackendOptions o;
      o.cache_dir = ekb::testing::test_cache_dir();
      return std::make_unique<runtime::CudaBackend>(o);
    } catch (const std::exception& e) {
      reason = e.what();
      return std::unique_ptr<runtime::CudaBackend>();
    }
  }();
  *why = reason;
  return backend.get();
}

#define REQUIRE_GPU(backend)                                  \
  std::string why_no_gpu;                                      \
  runtime::CudaBackend* backend = gpu_backend(&why_no_gpu);    \
  if (!backend) {                                              \
    GTEST_SKIP() << "no CUDA device: " << why_no_gpu;           \
  }                                                            \
  static_assert(true)

EvalOptions gpu_options() {
  EvalOptions o = ekb::testing::fast_options();
  o.call_timeout_s = 20;  // the first call loads the module; a one-thread stage may be slow
  return o;
}

class CudaCorpus : public ::testing::TestWithParam<std::string> {};

TEST_P(CudaCorpus, GetsTheRightVerdict) {
  REQUIRE_GPU(backend);
  std::string path = ekb::testing::adversarial_dir() + "/cuda/" + GetParam();
  std::ifstream in(path);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::string workload = ekb::testing::corpus_header(text, "workload"), expect = ekb::testing::corpus_header(text, "expect");
  WorkloadReference& ref = ekb::testing::TestWorkloads::get().reference(workload);
  CandidateResult r = evaluate(*backend, ref, runtime::Source::from_file(path),
                               native_baseline_source(ref.instance(), "cuda"), gpu_options());
  std::string got = r.error == ErrorKind::None ? "none" : std::string(error_kind_name(r.error));
  EXPECT_EQ(got, expect) << GetParam() << ": " << r.message;
  if (expect == "none") {
    ASSERT_TRUE(r.correct) << r.message;
    ASSERT_TRUE(r.time.has_value());
    EXPECT_GT(r.time->median_ms, 0);
  }
}

INSTANTIATE_TEST_SUITE_P(Files, CudaCorpus, ::testing::ValuesIn(ekb::testing::corpus_files("cuda", ".cu")),
                         ekb::testing::file_test_name);

TEST(CudaDevice, NativeDefaultIsCorrectAndTimedWithEvents) {
  REQUIRE_GPU(backend);
  for (const char* w : {"linalg.gemm/small", "nn.softmax/mbert_128x512", "audio.biquad_df1/block_2x32",
                        "audio.fir/audio48k_480x128_f16", "audio.lpc/g729_240_p10"}) {
    WorkloadReference& ref = ekb::testing::TestWorkloads::get().reference(w);
    runtime::Source native = native_baseline_source(ref.instance(), "cuda");
    CandidateResult r = evaluate(*backend, ref, native, native, gpu_options());
    EXPECT_TRUE(r.correct) << w << ": " << error_kind_name(r.error) << ": " << r.message;
    if (r.correct) EXPECT_GT(r.time->median_ms, 0) << w;
  }
}

TEST(CudaDevice, AStickyErrorDoesNotLeakIntoTheNextCandidate) {
  REQUIRE_GPU(backend);
  WorkloadReference& ref = ekb::testing::TestWorkloads::get().reference("linalg.gemm/small");
  runtime::Source base = native_baseline_source(ref.instance(), "cuda");
  std::string dir = ekb::testing::adversarial_dir() + "/cuda/";
  CandidateResult crash = evaluate(*backend, ref, runtime::Source::from_file(dir + "illegal_address.cu"), base, gpu_options());
  EXPECT_EQ(crash.error, ErrorKind::Crash) << crash.message;
  EXPECT_NE(crash.message.find("CUDA_ERROR"), std::string::npos) << crash.message;
  CandidateResult ok = evaluate(*backend, ref, runtime::Source::from_file(dir + "ok_gemm.cu"), base, gpu_options());
  EXPECT_TRUE(ok.correct) << ok.message;
}

}  // namespace
}  // namespace ekb::eval
