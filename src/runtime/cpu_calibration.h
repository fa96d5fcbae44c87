// `ekb calibrate --backend cpu` (and ekb-device serve's `calibrate`): this machine's memory bandwidth (STREAM copy/triad) and peak FP32
// rate (independent FMA chains at the widest SIMD the CPU supports), on all cores.
#pragma once
#include <cstddef>
#include <string>

#include "runtime/calibration.h"

namespace ekb::runtime {

struct CpuCalibrationOptions {
  int threads = 0;            // 0: every hardware thread
  size_t array_bytes = 0;     // per STREAM array; 0: chosen from the last-level cache size
  int runs = 5;               // timed runs per kernel (after one warm-up)
  double seconds_per_run = 0.1;  // target length of one peak-FLOP run
  // Small buffers and short runs: exercises the code path in tests; the numbers mean little.
  bool quick = false;
};

// The calibration's device is runtime::cpu_model_name(), the name the cpu backend records in
// every run, so that reports find it.
Calibration calibrate_cpu(const CpuCalibrationOptions& options = {});

}  // namespace ekb::runtime
