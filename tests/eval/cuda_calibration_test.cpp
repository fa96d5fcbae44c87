// `ekb calibrate --backend cuda` (eval/cuda_calibration.h): its kernels compile with NVRTC here,
// without a GPU; without one it says why; on a GPU (bench/gpu.sh) it measures plausible roofs
// under the name the cuda backend records, stored where reports look.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>

#include "eval/cuda_calibration.h"
#include "results/calibration_cache.h"
#include "run_ekb.h"
#include "runtime/cuda_backend.h"
#include "runtime/cuda_driver.h"
#include "test_paths.h"

namespace ekb::eval {
namespace {

CudaCalibrationOptions quick_options() {
  CudaCalibrationOptions o;
  o.quick = true;
  return o;
}

// Why no CUDA device can be used here ("" when one can).
std::string no_device_reason() {
  try {
    runtime::cuda::query_device();
    return "";
  } catch (const std::exception& e) {
    return e.what();
  }
}

TEST(CudaCalibration, KernelsCompileWithNvrtcForHopperAndAmpere) {
  std::string why;
  if (!runtime::cuda::nvrtc(&why)) GTEST_SKIP() << "NVRTC is not installed: " << why;
  for (const char* arch : {"sm_90", "sm_80"}) {
    std::string cubin, log;
    ASSERT_TRUE(runtime::cuda::nvrtc_compile_cubin(cuda_calibration_source(), "ekb_calibration.cu", arch,
                                                   {"--std=c++17"}, &cubin, &log))
        << arch << ":\n" << log;
    // Every kernel the calibration looks up is in the module (extern "C": its name is the symbol).
    for (const std::string& name : cuda_calibration_kernel_names())
      EXPECT_NE(cubin.find(name), std::string::npos) << arch << " cubin lacks " << name;
  }
}

TEST(CudaCalibration, WithoutADeviceSaysWhy) {
  const std::string why = no_device_reason();
  if (why.empty()) GTEST_SKIP() << "a CUDA device is present";
  try {
    calibrate_cuda(quick_options());
    FAIL() << "calibrated without a device";
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()), why);
  }
  auto r = testing_cli::run_ekb("calibrate --backend cuda --quick --no-db");
  EXPECT_NE(r.code, 0);
  EXPECT_NE(r.err.find("cannot calibrate the cuda backend: " + why), std::string::npos) << r.err;
}

TEST(CudaCalibration, OnADeviceMeasuresPlausibleRoofsUnderTheRunsDeviceName) {
  const std::string why = no_device_reason();
  if (!why.empty()) GTEST_SKIP() << "no CUDA device: " << why;
  runtime::Calibration c = calibrate_cuda(quick_options());
  EXPECT_EQ(c.backend, "cuda");
  EXPECT_EQ(c.device, runtime::cuda_device_name(runtime::cuda::query_device()));
  // Far below any GPU since 2015 (quick runs on 16 MiB arrays still reach hundreds of GB/s).
  EXPECT_GT(c.bandwidth_gbs.best, 50.0);
  EXPECT_GT(c.peak_gflops.best, 500.0);
  EXPECT_GT(runtime::measurement_from_json(c.details.at("fp16x2_fma_gflops")).best, 500.0);
  for (const char* kernel : {"copy_kernel_gbs", "triad_kernel_gbs", "memcpy_gbs"})
    EXPECT_LE(c.details["bandwidth"][kernel]["best"].get<double>(), c.bandwidth_gbs.best) << kernel;
  // The launch floor: an empty kernel takes a microsecond or a few, never a millisecond.
  for (const char* queue : {"idle", "after_flush", "two_after_flush"}) {
    const double median = c.details["launch"]["empty_kernel_us"][queue]["median"].get<double>();
    EXPECT_GT(median, 0.0) << queue;
    EXPECT_LT(median, 1000.0) << queue;
  }

  // Stored as a file under the cache directory (as `ekb calibrate` stores it), found again by the
  // backend and the device name that runs record.
  const std::string cache = ekb::testing::private_temp_path("cuda_calibration_cache");
  const char* previous = std::getenv("EKB_CACHE_DIR");
  const std::string saved = previous ? previous : "";
  ::setenv("EKB_CACHE_DIR", cache.c_str(), 1);
  results::save_calibration_file(c);
  auto stored = results::load_calibration_file("cuda", runtime::cuda_device_name(runtime::cuda::query_device()));
  previous ? ::setenv("EKB_CACHE_DIR", saved.c_str(), 1) : ::unsetenv("EKB_CACHE_DIR");
  std::filesystem::remove_all(cache);
  ASSERT_TRUE(stored.has_value()) << "no calibration file for '" << c.device << "' under " << cache;
  EXPECT_EQ(stored->peak_gflops.best, c.peak_gflops.best);
}

}  // namespace
}  // namespace ekb::eval
