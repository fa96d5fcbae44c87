// A device's measured ceilings: memory bandwidth and peak arithmetic rate, the two roofs of the
// roofline that `ekb calibrate` measures and roofline fractions are computed against. In runtime,
// below eval, because a remote device measures its own (ekb-device serve's `calibrate`).
#pragma once
#include <nlohmann/json.hpp>
#include <functional>
#include <string>
#include <vector>

#include "ir/target.h"

namespace ekb::runtime {

// One quantity measured several times. The best run is the ceiling (a roof is what the machine
// can reach, and noise only ever slows a run down); median and worst show how stable it was.
struct Measurement {
  double best = 0;
  double median = 0;
  double worst = 0;
  int runs = 0;
  // (best - worst) / best: 0.03 means the slowest run was 3% below the best.
  double spread() const { return best > 0 ? (best - worst) / best : 0; }
};

// Best, median and worst of `samples` where larger is better. Empty samples give all zeros.
Measurement summarize_higher_is_better(std::vector<double> samples);

// One warm-up run, then `runs` timed runs, each moving or computing `amount` units (bytes, FLOPs):
// the rates in units of 1e9 per second. `time_ms` does one run and returns its milliseconds.
Measurement measure_rate(int runs, double amount, const std::function<double()>& time_ms);

struct Calibration {
  std::string backend;  // "cpu", "cuda", "opencl"
  std::string device;   // the device name a run records, e.g. the CPU model name
  std::string created;  // ISO 8601 UTC
  Measurement bandwidth_gbs;  // GB/s (1e9 bytes per second)
  Measurement peak_gflops;    // GFLOP/s, FP32
  // GB/s of reads alone (cpu): a core keeps only so many reads in flight, so a kernel that only
  // reads is capped well below the copy rate (runs 0: not measured, no such roof).
  Measurement read_bandwidth_gbs;
  nlohmann::json details = nlohmann::json::object();  // per-kernel numbers, threads, SIMD, sizes

  double bandwidth_bytes_per_s() const { return bandwidth_gbs.best * 1e9; }
  double peak_flops_per_s() const { return peak_gflops.best * 1e9; }
  double read_bandwidth_bytes_per_s() const { return read_bandwidth_gbs.runs > 0 ? read_bandwidth_gbs.best * 1e9 : 0; }
};

// How a backend's calibrations are measured now, stored in their details ("method"); one measured
// another way (an older version of ekb) is not used: `ekb calibrate` measures a new one. cpu:
// STREAM with plain and streaming stores, and a read-only kernel (before, plain stores only: a roof
// that kernels with streaming stores exceeded by a third); "" for the others.
std::string calibration_method(ir::Target target);
bool is_current(const Calibration& c);

nlohmann::json to_json(const Measurement& m);
Measurement measurement_from_json(const nlohmann::json& j);
nlohmann::json to_json(const Calibration& c);
Calibration calibration_from_json(const nlohmann::json& j);  // throws nlohmann::json::exception

// Now as "2024-05-01T12:34:56Z".
std::string utc_timestamp_now();

}  // namespace ekb::runtime
