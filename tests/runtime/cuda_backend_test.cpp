// The cuda backend where there may be no GPU: the driver and NVRTC are loaded at run time, a
// missing device is a plain message (not a crash), and nvcc compiles solutions for a named arch.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <filesystem>

#include "eval/eval_test_util.h"
#include "run_ekb.h"
#include "runtime/cuda_backend.h"
#include "runtime/cuda_driver.h"

namespace ekb::runtime {
namespace {

std::string corpus_file(const std::string& name) { return ekb::testing::adversarial_dir() + "/cuda/" + name; }

// The reason there is no usable device, or "" when there is one.
std::string no_device_reason() {
  try {
    cuda::query_device();
    return "";
  } catch (const std::exception& e) {
    return e.what();
  }
}

TEST(CudaBackend, WithoutADeviceSaysSoPlainly) {
  std::string why = no_device_reason();
  if (why.empty()) GTEST_SKIP() << "a CUDA device is present";
  try {
    make_backend(ir::Target::Cuda);
    FAIL() << "make_backend(cuda) succeeded without a device";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("the cuda backend cannot run here"), std::string::npos) << e.what();
  }
  auto r = ekb::testing_cli::run_ekb("eval --backend cuda -s native linalg.gemm/small --db :memory:");
  EXPECT_EQ(r.code, 2) << r.err;  // a usage error, not a crash
  EXPECT_NE(r.err.find("cuda backend cannot run here"), std::string::npos) << r.err;
}

TEST(CudaBackend, CompilesForANamedArchWithoutADevice) {
  if (find_nvcc().empty()) GTEST_SKIP() << "nvcc is not installed";
  CudaBackendOptions o;
  o.arch = "sm_90";
  o.cache_dir = ekb::testing::test_cache_dir();
  CudaBackend backend(o);
  EXPECT_EQ(backend.arch(), "sm_90");
  Source ok = Source::from_file(corpus_file("ok_gemm.cu"));
  CompileOutcome first = backend.compile(ok);
  ASSERT_TRUE(first.ok) << first.log;
  EXPECT_EQ(first.artifact->backend, "cuda");
  CompileOutcome again = backend.compile(ok);
  ASSERT_TRUE(again.ok);
  EXPECT_TRUE(again.cached);
  EXPECT_EQ(again.artifact->path, first.artifact->path);
  // The shared object exports the ABI's entry point with C linkage (loading needs no driver).
  void* h = ::dlopen(first.artifact->path.c_str(), RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(h, nullptr) << ::dlerror();
  EXPECT_NE(::dlsym(h, "ekb_main"), nullptr);
  ::dlclose(h);

  Source broken{Language::Cuda, "extern \"C\" void ekb_main(float* y, cudaStream_t s) { undeclared(y); }\n",
                "broken.cu"};
  CompileOutcome bad = backend.compile(broken);
  EXPECT_FALSE(bad.ok);
  EXPECT_NE(bad.message.find("undeclared"), std::string::npos) << bad.message;
  EXPECT_NE(bad.log.find("broken.cu"), std::string::npos) << bad.log;  // named, not the temporary path

  CompileOutcome c = backend.compile(Source{Language::C, "void ekb_main(void) {}\n", "x.c"});
  EXPECT_FALSE(c.ok);
  EXPECT_NE(c.message.find("not c"), std::string::npos) << c.message;
}

TEST(CudaBackend, TheArchIsPartOfTheCacheKey) {
  if (find_nvcc().empty()) GTEST_SKIP() << "nvcc is not installed";
  CudaBackendOptions o;
  o.cache_dir = ekb::testing::test_cache_dir();
  o.arch = "sm_90";
  CudaBackend hopper(o);
  o.arch = "sm_80";
  CudaBackend ampere(o);
  Source ok = Source::from_file(corpus_file("ok_gemm.cu"));
  CompileOutcome a = hopper.compile(ok), b = ampere.compile(ok);
  ASSERT_TRUE(a.ok && b.ok) << a.log << b.log;
  EXPECT_NE(a.artifact->key, b.artifact->key);
}

TEST(CudaDriver, LoadsAtRunTimeOrSaysWhy) {
  std::string why;
  const cuda::DriverApi* api = cuda::driver(&why);
  if (!api) {
    EXPECT_NE(why.find("libcuda"), std::string::npos) << why;
    GTEST_SKIP() << "no CUDA driver: " << why;
  }
  EXPECT_NE(api->cuInit, nullptr);
  EXPECT_NE(api->cuEventElapsedTime, nullptr);
  EXPECT_EQ(cuda::error_text(700).rfind("CUDA_ERROR_ILLEGAL_ADDRESS", 0), 0u) << cuda::error_text(700);
  EXPECT_TRUE(cuda::is_sticky_error(700));
  EXPECT_FALSE(cuda::is_sticky_error(2));  // out of memory: the context survives
}

}  // namespace
}  // namespace ekb::runtime
