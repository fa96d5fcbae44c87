// Parameters of the tests that run once per suite workload: the embedded suite, every workload's
// name, and a gtest-safe test name for it.
#pragma once
#include <gtest/gtest.h>

#include <cctype>
#include <cstdlib>
#include <string>
#include <vector>

#include "suite/stats.h"
#include "suite/suite.h"

namespace ekb::codegen::testing {

inline const suite::Suite& embedded_suite() {
  static const suite::Suite s = suite::Suite::load();
  return s;
}

inline std::vector<std::string> all_workload_names() {
  std::vector<std::string> names;
  for (const auto& w : embedded_suite().workloads()) names.push_back(w.full_name());
  return names;
}

// Every `stride`-th workload of each (domain, level) stratum (suite::stratified_subset, so that
// every domain and level is in it), or every workload when $`all_env` is "all": CI runs the
// subset, bench/suite_all.sh and a full check run all of it.
inline std::vector<std::string> ci_workload_names(const char* all_env, size_t stride) {
  const char* all = std::getenv(all_env);
  if (all && std::string(all) == "all") return all_workload_names();
  std::vector<std::string> subset;
  for (const auto& w : suite::stratified_subset(embedded_suite().workloads(), stride)) subset.push_back(w.full_name());
  return subset;
}

inline std::string workload_test_name(const ::testing::TestParamInfo<std::string>& info) {
  std::string n;
  for (char c : info.param) n += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  return n;
}

}  // namespace ekb::codegen::testing
