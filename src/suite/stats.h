// Counting the suite: patterns and workloads by domain, level, dtype and size class, and the
// held-out rule (each pattern has a held-out workload whose shape no public workload has).
// Used by `ekb suite stats` and by the suite's own tests.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "suite/suite.h"

namespace ekb::suite {

struct StatCounts {
  int patterns = 0;   // distinct patterns with at least one counted workload
  int workloads = 0;
  int heldout = 0;    // held-out workloads among them
};

struct SuiteStats {
  StatCounts total;
  // Keyed by domain, level ("operator", ...), dtype (workload_dtype) and size class ("micro", ...).
  // A pattern counts once in each dtype and size class that one of its workloads has.
  std::map<std::string, StatCounts> by_domain, by_level, by_dtype, by_size;
  int patterns_with_heldout = 0;              // at least one workload tagged heldout
  std::vector<std::string> without_new_heldout_shape;  // patterns breaking the held-out rule
};

// A workload's shape: its integer bindings ("N=1,H=96,..."), without type bindings, so that a
// held-out workload differing from a public one only in dtype has the same shape.
std::string workload_shape_key(const ir::Workload& w);

// True when some held-out workload of `p` has a shape that no public workload of `p` has.
bool has_new_heldout_shape(const PatternEntry& p);

// Counts over `workloads` (e.g. a Selection's result, in pattern order).
SuiteStats compute_stats(const std::vector<WorkloadEntry>& workloads);

// A subset for CI that keeps the suite's mix: within each (domain, level) stratum, in suite order,
// every `stride`-th workload starting with the first, so that every stratum is represented (a
// plain every-`stride`-th pick over the whole suite can miss a small stratum entirely).
std::vector<WorkloadEntry> stratified_subset(const std::vector<WorkloadEntry>& workloads, size_t stride);

}  // namespace ekb::suite
