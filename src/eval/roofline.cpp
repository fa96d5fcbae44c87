#include "eval/roofline.h"

#include <algorithm>

namespace ekb::eval {

namespace {

double memory_seconds(const WorkCost& cost, const Roofline& roof) {
  double t = cost.bytes / roof.bandwidth_bytes_per_s;
  if (roof.read_bandwidth_bytes_per_s > 0) t = std::max(t, cost.read_bytes / roof.read_bandwidth_bytes_per_s);
  return t;
}

}  // namespace

double attainable_seconds(const WorkCost& cost, const Roofline& roof) {
  return std::max(cost.ops / roof.peak_ops_per_s, memory_seconds(cost, roof));
}

bool memory_bound(const WorkCost& cost, const Roofline& roof) {
  return memory_seconds(cost, roof) >= cost.ops / roof.peak_ops_per_s;
}

std::optional<double> roofline_fraction(const WorkCost& cost, const Roofline& roof, double measured_ms) {
  if (!roof.valid() || !(measured_ms > 0)) return std::nullopt;
  return attainable_seconds(cost, roof) / (measured_ms / 1e3);
}

}  // namespace ekb::eval
