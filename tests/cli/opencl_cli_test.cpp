// `ekb eval --backend opencl --platform SUBSTRING --device INDEX`: the device options are only for
// opencl, and a platform that does not exist is refused plainly, listing what exists.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "run_ekb.h"
#include "test_paths.h"

namespace {

using Result = ekb::testing_cli::EkbResult;
Result ekb(const std::string& args) { return ekb::testing_cli::run_ekb(args); }

bool contains(const std::string& s, const std::string& what) { return s.find(what) != std::string::npos; }

TEST(CliOpenCL, DeviceOptionsAreForOpenCL) {
  Result r = ekb("eval --backend cpu --platform pocl -s native linalg.gemm/small");
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_TRUE(contains(r.err, "--platform, --device and --build-options are the opencl backend's")) << r.err;
  Result options = ekb("eval --backend cpu --build-options -cl-fast-relaxed-math -s native linalg.gemm/small");
  EXPECT_EQ(options.code, 2) << options.err;
}

// --build-options replaces clBuildProgram's options: a kernel that builds only with a macro the
// options define is correct with them and a compile error without them; and the default options
// are in the device's compiler string of the results.
TEST(CliOpenCL, BuildOptionsReachTheCompiler) {
  if (ekb("eval --backend opencl --platform pocl -s native --no-timing linalg.gemm/mini").code != 0)
    GTEST_SKIP() << "no PoCL platform here";
  const std::filesystem::path dir = ekb::testing::private_temp_path("build_options");
  std::filesystem::create_directories(dir / "linalg.gemm");
  // The corpus's correct GEMM, its alpha (1.5f) replaced by a macro that only the options define.
  std::ifstream corpus(EKB_TEST_DATA_DIR "/../adversarial/opencl/ok_gemm.cl");
  std::string kernel((std::istreambuf_iterator<char>(corpus)), std::istreambuf_iterator<char>());
  const size_t alpha = kernel.find("1.5f * A[");
  ASSERT_NE(alpha, std::string::npos) << kernel;
  kernel.replace(alpha, 4, "EKB_TEST_SCALE");
  std::ofstream(dir / "linalg.gemm" / "small.cl")
      << "#ifndef EKB_TEST_SCALE\n#error \"the build options did not arrive\"\n#endif\n" << kernel;
  const std::string json = (dir / "results.json").string();
  const std::string common = "eval --backend opencl --platform pocl --no-timing --db " + (dir / "r.db").string() +
                             " -s " + dir.string() + " linalg.gemm/small --json " + json;
  Result with = ekb(common + " --build-options '-cl-std=CL1.2 -DEKB_TEST_SCALE=1.5f'");
  ASSERT_EQ(with.code, 0) << with.err;
  nlohmann::json doc = nlohmann::json::parse(std::ifstream(json));
  ASSERT_EQ(doc["results"].size(), 1u);
  EXPECT_TRUE(doc["results"][0]["correct"].get<bool>()) << doc["results"][0].dump();
  EXPECT_TRUE(contains(doc["device"]["compiler"].get<std::string>(), "-DEKB_TEST_SCALE=1.5f")) << doc["device"].dump();

  ekb(common);
  doc = nlohmann::json::parse(std::ifstream(json));
  ASSERT_EQ(doc["results"].size(), 1u);
  EXPECT_FALSE(doc["results"][0]["compiled"].get<bool>());
  EXPECT_TRUE(contains(doc["results"][0].value("message", ""), "the build options did not arrive"))
      << doc["results"][0].dump();
  EXPECT_TRUE(contains(doc["device"]["compiler"].get<std::string>(), "build options -cl-std=CL1.2"))
      << doc["device"].dump();
  std::filesystem::remove_all(dir);
}

TEST(CliOpenCL, AMissingPlatformIsRefusedPlainly) {
  Result r = ekb("eval --backend opencl --platform no-such-platform-xyz -s native linalg.gemm/small");
  EXPECT_EQ(r.code, 2) << r.err;
  // Either no OpenCL at all here, or a list of the platforms that do exist.
  EXPECT_TRUE(contains(r.err, "the opencl backend cannot run here")) << r.err;
  EXPECT_TRUE(contains(r.err, "no OpenCL platform") || contains(r.err, "ICD loader")) << r.err;
}

TEST(CliOpenCL, NoPlatformAtAllIsSaidPlainly) {
  // The ICD loader reads its vendor list from this directory instead of /etc/OpenCL/vendors.
  const std::string empty = ekb::testing::private_temp_path("no_vendors");
  std::filesystem::create_directories(empty);
  ::setenv("OCL_ICD_VENDORS", empty.c_str(), 1);
  Result r = ekb("eval --backend opencl -s native linalg.gemm/small");
  ::unsetenv("OCL_ICD_VENDORS");
  std::filesystem::remove_all(empty);
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_TRUE(contains(r.err, "the opencl backend cannot run here: no OpenCL platform")) << r.err;
}

}  // namespace
