// What the tvm tests share: a workload of the embedded suite bound to its instance, and a
// substring check for TVM's messages and generated sources.
#pragma once
#include <string>

#include "codegen/suite_params.h"
#include "suite/suite.h"

namespace ekb::tvm::testing {

inline bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

inline ir::Instance bind(const std::string& name) { return codegen::testing::bound_workload(name); }

}  // namespace ekb::tvm::testing
