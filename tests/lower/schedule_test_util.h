// Helpers for the schedule pass tests: a pattern with schedule blocks, lowered (the loop IR after
// apply_schedule), or compiled with clang and run against the reference.
#pragma once
#include <gtest/gtest.h>

#include <string>

#include "../codegen/native_test_util.h"
#include "../ir/ir_test_util.h"
#include "lower_test_util.h"
#include "codegen/c_emitter.h"
#include "ir/inputs.h"
#include "ir/interpreter.h"
#include "lower/lower.h"
#include "lower/schedule_loops.h"

namespace ekb::lower::testing {

using namespace lir;

// The cpu backend's flags, at -O2 for test speed.
inline constexpr const char* kScheduledFlags = "-O2 -march=native -fopenmp";

// "pattern nn.t { BODY } workload w { WORKLOAD } schedule cpu { SCHEDULE }"
inline std::string with_schedule(const std::string& body, const std::string& workload, const std::string& schedule) {
  return pattern(body, workload) + "schedule cpu {\n" + schedule + "\n}\n";
}

// The loop IR of the first workload in `text` after apply_schedule.
inline std::string scheduled_lir(const std::string& text) {
  auto l = ir::testing::load(text);
  if (!l.inst) return "verifier: " + l.diags;
  LowerOptions o;
  o.stop_after = "apply_schedule";
  return to_string(*lower(*l.inst, o).body);
}

// The ScheduleError that lowering `text` gives ("" when it lowers).
inline std::string schedule_error(const std::string& text) {
  auto l = ir::testing::load(text);
  if (!l.inst) return "verifier: " + l.diags;
  try {
    lower(*l.inst);
  } catch (const ScheduleError& e) {
    return e.what();
  }
  return "";
}

// Compiles instance's scheduled C and compares it with the reference on seeded inputs: "" when
// every output matches, else the first difference and the source.
inline std::string matches_reference(const ir::Instance& inst, uint64_t seed = 1) {
  std::string source = codegen::emit_c_source(lower::lower(inst));
  codegen::testing::NativeKernel kernel(source, kScheduledFlags);
  auto inputs = ir::generate_inputs(inst, seed);
  std::string diff = codegen::testing::compare_outputs(inst, codegen::testing::run_native(kernel, inst, inputs),
                                                       ir::run_reference(inst, inputs));
  return diff.empty() ? "" : diff + "\n" + source;
}

inline std::string matches_reference(const std::string& text) {
  auto l = ir::testing::load(text);
  if (!l.inst) return "verifier: " + l.diags;
  return matches_reference(*l.inst);
}

}  // namespace ekb::lower::testing
