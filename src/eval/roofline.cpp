#include "eval/roofline.h"

#include <algorithm>

namespace ekb::eval {

double attainable_seconds(const WorkCost& cost, const Roofline& roof) {
  return std::max(cost.ops / roof.peak_ops_per_s, cost.bytes / roof.bandwidth_bytes_per_s);
}

bool memory_bound(const WorkCost& cost, const Roofline& roof) {
  return cost.bytes / roof.bandwidth_bytes_per_s >= cost.ops / roof.peak_ops_per_s;
}

std::optional<double> roofline_fraction(const WorkCost& cost, const Roofline& roof, double measured_ms) {
  if (!roof.valid() || !(measured_ms > 0)) return std::nullopt;
  return attainable_seconds(cost, roof) / (measured_ms / 1e3);
}

}  // namespace ekb::eval
