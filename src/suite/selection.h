// Choosing workloads from the suite by name glob, domain, level, dtype and size class.
// Shared by every command that takes a selection (list today; eval and generate later).
#pragma once
#include <string>
#include <vector>

#include "suite/suite.h"

namespace ekb::suite {

struct Selection {
  std::vector<std::string> names;    // shell globs over "pattern/workload" (or a pattern name)
  std::vector<std::string> domains;  // nn, qnn, img, ...
  std::vector<std::string> levels;   // operator, fused, graph
  std::vector<std::string> dtypes;   // f32, i8, ...
  std::vector<std::string> sizes;    // micro, mobile
  bool include_heldout = true;

  bool matches(const WorkloadEntry& w) const;
  std::vector<WorkloadEntry> apply(const Suite& s) const;
  // Throws std::invalid_argument naming a filter value no workload could ever match
  // (e.g. --domain nnn), with the nearest valid value as a hint.
  void check_values() const;
};

}  // namespace ekb::suite
