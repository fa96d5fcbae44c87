// Helpers for tests that run verified instances: parse a pattern from text and instantiate one of
// its workloads, failing the test with the diagnostics when that does not work.
#pragma once
#include <gtest/gtest.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ir/diagnostics.h"
#include "ir/instance.h"
#include "ir/parser.h"
#include "ir/tensor_data.h"

namespace ekb::ir::testing {

struct Loaded {
  std::unique_ptr<Module> module;  // the Instance points into it
  std::optional<Instance> inst;
  std::string diags;
};

inline Loaded load(const std::string& text, const std::string& workload = "") {
  Loaded l;
  l.module = std::make_unique<Module>(parse_module(text, "test.ekb"));
  const Workload* w = workload.empty() ? &l.module->workloads.at(0)
                                       : l.module->find_workload(workload);
  if (!w) {
    l.diags = "no workload '" + workload + "'";
    return l;
  }
  Diagnostics d("test.ekb");
  l.inst = instantiate(*l.module, *w, d);
  l.diags = d.format();
  return l;
}

// ASSERT-style: use as `auto l = load(...); ASSERT_TRUE(l.inst) << l.diags;`

inline TensorData tensor_f(ScalarType t, std::vector<int64_t> shape, std::vector<double> v) {
  TensorData d(t, std::move(shape));
  d.f = std::move(v);
  return d;
}
inline TensorData tensor_i(ScalarType t, std::vector<int64_t> shape, std::vector<int64_t> v) {
  TensorData d(t, std::move(shape));
  d.i = std::move(v);
  return d;
}

}  // namespace ekb::ir::testing
