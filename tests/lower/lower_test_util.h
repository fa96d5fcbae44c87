// Helpers for the lowering pass tests: a small pattern bound to one workload, lowered up to a
// given pass, printed as loop IR.
#pragma once
#include <gtest/gtest.h>

#include <string>

#include "../ir/ir_test_util.h"
#include "lower/lower.h"

namespace ekb::lower::testing {

using namespace lir;

// "pattern nn.t { ... BODY } workload w { WORKLOAD }"
inline std::string pattern(const std::string& body, const std::string& workload) {
  return "pattern nn.t {\n  level operator\n  source \"test\"\n" + body + "\n}\nworkload w { " + workload +
         " }\n";
}

// The workload lowered up to and including pass `stop` ("" = all passes).
struct Lowered {
  ir::testing::Loaded loaded;
  Func func;
  std::string body;  // to_string(*func.body)
};

inline Lowered lower_text(const std::string& text, const std::string& stop = "", LowerOptions options = {}) {
  Lowered l;
  l.loaded = ir::testing::load(text);
  EXPECT_TRUE(l.loaded.inst) << l.loaded.diags;
  if (!l.loaded.inst) return l;
  options.stop_after = stop;
  l.func = lower(*l.loaded.inst, options);
  l.body = to_string(*l.func.body);
  return l;
}

}  // namespace ekb::lower::testing
