// `ekb calibrate --backend opencl` (eval/opencl_calibration.h) on whatever OpenCL device is here
// (PoCL on the CPU in CI, the NVIDIA platform in bench/gpu.sh): plausible roofs under the name the
// opencl backend records; a platform that does not exist is refused saying so.
#include <gtest/gtest.h>

#include "eval/opencl_calibration.h"
#include "runtime/opencl_backend.h"

namespace ekb::eval {
namespace {

TEST(OpenCLCalibration, MeasuresPlausibleRoofsUnderTheRunsDeviceName) {
  std::string device_name;
  try {
    device_name = runtime::OpenCLBackend().device_info().name;
  } catch (const std::exception& e) {
    GTEST_SKIP() << "no OpenCL device: " << e.what();
  }
  OpenCLCalibrationOptions quick;
  quick.quick = true;
  runtime::Calibration c = calibrate_opencl(quick);
  EXPECT_EQ(c.backend, "opencl");
  EXPECT_EQ(c.device, device_name);
  // Far below any device that runs OpenCL, a 2-core VM under load included.
  EXPECT_GT(c.bandwidth_gbs.best, 0.2);
  EXPECT_GT(c.peak_gflops.best, 0.5);
  EXPECT_LE(c.details["bandwidth"]["copy_kernel_gbs"]["best"].get<double>(), c.bandwidth_gbs.best);
  EXPECT_GT(c.details["fp32_fma_gflops"]["runs"].get<int>(), 1);
  // The launch floor: an empty kernel takes some time, and less than a millisecond anywhere.
  const auto& empty = c.details["launch"]["empty_kernel_us"];
  for (const char* queue : {"idle", "after_flush", "two_after_flush"}) {
    EXPECT_GT(empty[queue]["median"].get<double>(), 0.0) << queue;
    EXPECT_LT(empty[queue]["median"].get<double>(), 1000.0) << queue;
    EXPECT_LE(empty[queue]["p25"].get<double>(), empty[queue]["p75"].get<double>()) << queue;
  }
}

TEST(OpenCLCalibration, AMissingPlatformIsRefusedPlainly) {
  try {
    OpenCLCalibrationOptions options;
    options.device = {"no-such-platform-anywhere", 0};
    options.quick = true;
    calibrate_opencl(options);
    FAIL() << "calibrated a platform that does not exist";
  } catch (const std::runtime_error& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("cannot run here"), std::string::npos) << message;
  }
}

}  // namespace
}  // namespace ekb::eval
