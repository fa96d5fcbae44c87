// What the tvm tests share: a workload of the embedded suite bound to its instance, and a
// substring check for TVM's messages and generated sources.
#pragma once
#include <stdexcept>
#include <string>

#include "codegen/suite_params.h"
#include "suite/suite.h"

namespace ekb::tvm::testing {

inline bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

inline ir::Instance bind(const std::string& name) {
  auto w = codegen::testing::embedded_suite().find_workload(name);
  if (!w) throw std::runtime_error("no workload " + name);
  return suite::bind_workload(*w);
}

}  // namespace ekb::tvm::testing
