// `ekb calibrate --backend cuda`: the GPU's roofline, measured with kernels the harness compiles at
// run time with NVRTC and times with CUDA events (runtime/cuda_driver.h; nothing is linked, so
// `ekb` still builds and runs without the toolkit or a GPU, and says why it cannot calibrate):
//  - memory bandwidth: device-to-device copies of arrays several times the L2 (a float4 copy
//    kernel, a float4 triad and cuMemcpyDtoDAsync), bytes read plus bytes written, as STREAM counts;
//  - peak FP32: independent `x = fmaf(x, m, c)` chains in every thread of a full device;
//  - peak FP16: the same with `fma.rn.f16x2` (two halves per instruction), kept in the details (the
//    roof of every workload is the FP32 rate: docs/METRICS.md).
#pragma once
#include <string>
#include <vector>

#include "runtime/calibration.h"

namespace ekb::eval {

struct CudaCalibrationOptions {
  int device = 0;              // CUDA device ordinal
  size_t array_bytes = 0;      // per array; 0: 8x the L2, within [256 MiB, 2 GiB] and an 8th of memory
  int runs = 5;                // timed runs per kernel (after one warm-up)
  double seconds_per_run = 0.05;  // target length of one peak-FLOP run
  // Small buffers and short runs: exercises the code path; the numbers mean little.
  bool quick = false;
};

// The kernels' CUDA C++ source (no #include: NVRTC compiles it without the toolkit's headers) and
// the names of its kernels, for tests that compile it without a GPU.
const std::string& cuda_calibration_source();
const std::vector<std::string>& cuda_calibration_kernel_names();

// The calibration's device is runtime::cuda_device_name(), the name the cuda backend records in
// every run. Throws std::runtime_error saying why when there is no driver, device or NVRTC.
runtime::Calibration calibrate_cuda(const CudaCalibrationOptions& options = {});

}  // namespace ekb::eval
