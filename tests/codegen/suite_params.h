// Parameters of the tests that run once per suite workload: the embedded suite, every workload's
// name, and a gtest-safe test name for it.
#pragma once
#include <gtest/gtest.h>

#include <cctype>
#include <string>
#include <vector>

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

inline std::string workload_test_name(const ::testing::TestParamInfo<std::string>& info) {
  std::string n;
  for (char c : info.param) n += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  return n;
}

}  // namespace ekb::codegen::testing
