// The cuda backend end to end on a GPU: the native default lowering is correct under the whole
// protocol, and the CUDA corpus (tests/adversarial/cuda/) gets the verdict each file's header
// names: device-side overruns near and far, input writes, work left on another stream, sticky
// errors and a destroyed or replaced context (the worker replaced; the candidate blamed) are
// caught. Every test skips, saying why, on a machine without a CUDA device.
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
                               native_baseline_source(ref.instance(), ir::Target::Cuda), gpu_options());
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
    runtime::Source native = native_baseline_source(ref.instance(), ir::Target::Cuda);
    CandidateResult r = evaluate(*backend, ref, native, native, gpu_options());
    EXPECT_TRUE(r.correct) << w << ": " << error_kind_name(r.error) << ": " << r.message;
    if (r.correct) EXPECT_GT(r.time->median_ms, 0) << w;
  }
}

TEST(CudaDevice, AStickyErrorDoesNotLeakIntoTheNextCandidate) {
  REQUIRE_GPU(backend);
  WorkloadReference& ref = ekb::testing::TestWorkloads::get().reference("linalg.gemm/small");
  runtime::Source base = native_baseline_source(ref.instance(), ir::Target::Cuda);
  std::string dir = ekb::testing::adversarial_dir() + "/cuda/";
  CandidateResult crash = evaluate(*backend, ref, runtime::Source::from_file(dir + "illegal_address.cu"), base, gpu_options());
  EXPECT_EQ(crash.error, ErrorKind::OutOfBounds) << crash.message;
  EXPECT_NE(crash.message.find("CUDA_ERROR"), std::string::npos) << crash.message;
  CandidateResult ok = evaluate(*backend, ref, runtime::Source::from_file(dir + "ok_gemm.cu"), base, gpu_options());
  EXPECT_TRUE(ok.correct) << ok.message;
}

TEST(CudaDevice, AnAccessFarFromEveryBufferFaultsAsOutOfBounds) {
  REQUIRE_GPU(backend);
  WorkloadReference& ref = ekb::testing::TestWorkloads::get().reference("linalg.gemm/small");
  runtime::Source base = native_baseline_source(ref.instance(), ir::Target::Cuda);
  std::string dir = ekb::testing::adversarial_dir() + "/cuda/";
  CandidateResult far = evaluate(*backend, ref, runtime::Source::from_file(dir + "far_write_kernel.cu"), base, gpu_options());
  EXPECT_EQ(far.error, ErrorKind::OutOfBounds) << far.message;
  EXPECT_NE(far.message.find("outside its buffers"), std::string::npos) << far.message;
  // Just before a buffer: the mapped guard bytes there, checked on the device, name the buffer.
  CandidateResult before = evaluate(*backend, ref, runtime::Source::from_file(dir + "underrun_4k.cu"), base, gpu_options());
  EXPECT_EQ(before.error, ErrorKind::OutOfBounds) << before.message;
  EXPECT_NE(before.message.find("before the start of output 'C'"), std::string::npos) << before.message;
}

TEST(CudaDevice, BreakingTheContextIsTheCandidatesFaultNotTheHarnesss) {
  REQUIRE_GPU(backend);
  WorkloadReference& ref = ekb::testing::TestWorkloads::get().reference("linalg.gemm/small");
  runtime::Source base = native_baseline_source(ref.instance(), ir::Target::Cuda);
  std::string dir = ekb::testing::adversarial_dir() + "/cuda/";
  for (const char* file : {"device_reset.cu", "device_reset_reinit.cu"}) {
    CandidateResult reset = evaluate(*backend, ref, runtime::Source::from_file(dir + file), base, gpu_options());
    EXPECT_EQ(reset.error, ErrorKind::Crash) << file << ": " << reset.message;
    EXPECT_NE(reset.message.find("destroyed the CUDA context"), std::string::npos) << file << ": " << reset.message;
  }
  CandidateResult other = evaluate(*backend, ref, runtime::Source::from_file(dir + "switches_context.cu"), base, gpu_options());
  EXPECT_EQ(other.error, ErrorKind::Crash) << other.message;
  EXPECT_NE(other.message.find("another CUDA context current"), std::string::npos) << other.message;
  CandidateResult ok = evaluate(*backend, ref, runtime::Source::from_file(dir + "ok_gemm.cu"), base, gpu_options());
  EXPECT_TRUE(ok.correct) << ok.message;
}

}  // namespace
}  // namespace ekb::eval
