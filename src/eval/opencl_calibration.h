// `ekb calibrate --backend opencl`: an OpenCL device's roofline, measured like the cuda one
// (eval/cuda_calibration.h) with OpenCL C kernels built on the device and timed with profiling
// events on an in-order queue: memory bandwidth as the better of a float4 copy kernel and a float4
// triad (bytes read plus bytes written), peak FP32 from independent `fma` chains in every
// work-item. No FP16 peak: NVIDIA's OpenCL has no cl_khr_fp16.
#pragma once
#include <string>
#include <vector>

#include "runtime/calibration.h"
#include "runtime/opencl_driver.h"

namespace ekb::eval {

struct OpenCLCalibrationOptions {
  runtime::DeviceSelection device;  // empty platform: the first platform with a device
  size_t array_bytes = 0;  // per array; 0: GPUs 8x the global cache within [256 MiB, 2 GiB], CPUs as `cpu`
  int runs = 5;            // timed runs per kernel (after one warm-up)
  double seconds_per_run = 0.05;  // target length of one peak-FLOP run
  bool quick = false;      // small buffers and short runs: exercises the code path
};

// The kernels' OpenCL C source and names, for tests that build them without calibrating.
const std::string& opencl_calibration_source();
const std::vector<std::string>& opencl_calibration_kernel_names();

// The calibration's device is the name the opencl backend records in every run (its DeviceInfo).
// Throws std::runtime_error saying why when there is no platform or device.
runtime::Calibration calibrate_opencl(const OpenCLCalibrationOptions& options = {});

}  // namespace ekb::eval
