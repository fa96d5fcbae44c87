// Parameters of the tests that run once per suite workload: the embedded suite, every workload's
// name, a gtest-safe test name for it, and a workload bound to its instance by name.
#pragma once
#include <gtest/gtest.h>

#include <cctype>
#include <cmath>
#include <limits>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <vector>

#include "ir/cost.h"
#include "param_cache.h"
#include "suite/stats.h"
#include "suite/suite.h"

namespace ekb::codegen::testing {

inline const suite::Suite& embedded_suite() {
  static const suite::Suite s = suite::Suite::load();
  return s;
}

// The named workload of the embedded suite bound to its instance; throws (failing the test with the
// name) when the suite has no such workload.
inline ir::Instance bound_workload(const std::string& name) {
  auto w = embedded_suite().find_workload(name);
  if (!w) throw std::runtime_error("no workload " + name);
  return suite::bind_workload(*w);
}

inline std::vector<std::string> all_workload_names() {
  return ekb::testing::cached_param_list("all_workload_names", "", [] {
    std::vector<std::string> names;
    for (const auto& w : embedded_suite().workloads()) names.push_back(w.full_name());
    return names;
  });
}

// Every `stride`-th workload of each (domain, level) stratum (suite::stratified_subset, so that
// every domain and level is in it), or every workload when $`all_env` is "all": CI runs the
// subset, bench/suite_all.sh and a full check run all of it. `max_ops` leaves out of the subset the
// workloads whose reference would take the interpreter longer than a test should (a 1024^3 GEMM
// or a batch of a whole network: 20-25 s each, a sixth of the CI suite's time for 5 tests).
inline std::vector<std::string> ci_workload_names(const char* all_env, size_t stride,
                                                  double max_ops = std::numeric_limits<double>::infinity()) {
  const char* all = std::getenv(all_env);
  if (all && std::string(all) == "all") return all_workload_names();
  return ekb::testing::cached_param_list(
      "ci_workload_names_" + std::to_string(stride) + "_" + std::to_string(max_ops), "", [&] {
        std::vector<std::string> subset;
        for (const auto& w : suite::stratified_subset(embedded_suite().workloads(), stride))
          if (std::isinf(max_ops) || ir::compute_cost(suite::bind_workload(w)).ops() <= max_ops)
            subset.push_back(w.full_name());
        return subset;
      });
}

inline std::string workload_test_name(const ::testing::TestParamInfo<std::string>& info) {
  std::string n;
  for (char c : info.param) n += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  return n;
}

}  // namespace ekb::codegen::testing
