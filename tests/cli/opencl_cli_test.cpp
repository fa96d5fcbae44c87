// `ekb eval --backend opencl --platform SUBSTRING --device INDEX`: the device options are only for
// opencl, and a platform that does not exist is refused plainly, listing what exists.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>

#include "run_ekb.h"
#include "test_paths.h"

namespace {

using Result = ekb::testing_cli::EkbResult;
Result ekb(const std::string& args) { return ekb::testing_cli::run_ekb(args); }

bool contains(const std::string& s, const std::string& what) { return s.find(what) != std::string::npos; }

TEST(CliOpenCL, DeviceOptionsAreForOpenCL) {
  Result r = ekb("eval --backend cpu --platform pocl -s native linalg.gemm/small");
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_TRUE(contains(r.err, "--platform and --device choose an OpenCL device")) << r.err;
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
