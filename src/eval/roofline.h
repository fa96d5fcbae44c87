// How close a measured time comes to the device's roofline: the attainable time of a workload is
// the largest of its compute time at peak rate, its minimum traffic at full bandwidth and (where
// the calibration measured one) its reads at the read-only rate.
#pragma once
#include <optional>

#include "runtime/calibration.h"

namespace ekb::eval {

struct Roofline {
  double peak_ops_per_s = 0;
  double bandwidth_bytes_per_s = 0;
  double read_bandwidth_bytes_per_s = 0;  // 0: no read roof
  static Roofline from(const runtime::Calibration& c) {
    return {c.peak_flops_per_s(), c.bandwidth_bytes_per_s(), c.read_bandwidth_bytes_per_s()};
  }
  bool valid() const { return peak_ops_per_s > 0 && bandwidth_bytes_per_s > 0; }
};

// What a workload must do, from ir::compute_cost: ops = flops + int_ops (integer ops are charged
// at the FP32 rate, see docs/METRICS.md), bytes = min_bytes, read_bytes = input_bytes.
struct WorkCost {
  double ops = 0;
  double bytes = 0;
  double read_bytes = 0;
};

// max(ops / peak, bytes / bandwidth, read_bytes / read bandwidth), in seconds.
double attainable_seconds(const WorkCost& cost, const Roofline& roof);
// True when the bandwidth roof is the one that binds.
bool memory_bound(const WorkCost& cost, const Roofline& roof);
// attainable / measured, in (0, 1] for a kernel below the roof (a value above 1 means the
// calibration underestimates the device or the cost counts work the kernel legitimately skipped).
// nullopt when the roofline is not valid or the measured time is not positive.
std::optional<double> roofline_fraction(const WorkCost& cost, const Roofline& roof, double measured_ms);

}  // namespace ekb::eval
