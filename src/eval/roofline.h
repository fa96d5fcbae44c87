// How close a measured time comes to the device's roofline: the attainable time of a workload is
// the larger of its compute time at peak rate and its minimum traffic at full bandwidth.
#pragma once
#include <optional>

#include "eval/calibration.h"

namespace ekb::eval {

struct Roofline {
  double peak_ops_per_s = 0;
  double bandwidth_bytes_per_s = 0;
  static Roofline from(const Calibration& c) { return {c.peak_flops_per_s(), c.bandwidth_bytes_per_s()}; }
  bool valid() const { return peak_ops_per_s > 0 && bandwidth_bytes_per_s > 0; }
};

// What a workload must do, from ir::compute_cost: ops = flops + int_ops (integer ops are charged
// at the FP32 rate, see docs/METRICS.md), bytes = min_bytes.
struct WorkCost {
  double ops = 0;
  double bytes = 0;
};

// max(ops / peak, bytes / bandwidth), in seconds.
double attainable_seconds(const WorkCost& cost, const Roofline& roof);
// True when the bandwidth roof is the one that binds.
bool memory_bound(const WorkCost& cost, const Roofline& roof);
// attainable / measured, in (0, 1] for a kernel below the roof (a value above 1 means the
// calibration underestimates the device or the cost counts work the kernel legitimately skipped).
// nullopt when the roofline is not valid or the measured time is not positive.
std::optional<double> roofline_fraction(const WorkCost& cost, const Roofline& roof, double measured_ms);

}  // namespace ekb::eval
