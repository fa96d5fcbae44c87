// Helpers for the lowering pass tests (the tests are in namespace ekb::lower::testing): a small
// pattern bound to one workload, lowered up to a given pass and printed as loop IR; the gpu
// lowerings and a look at the statements they leave; a pattern with schedule blocks, lowered after
// apply_schedule, or compiled with clang and run against the reference.
#pragma once
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "../codegen/native_test_util.h"
#include "../ir/ir_test_util.h"
#include "codegen/c_emitter.h"
#include "ir/inputs.h"
#include "ir/interpreter.h"
#include "lir/mutator.h"
#include "lower/lower.h"
#include "lower/schedule_loops.h"

namespace ekb::lower::testing {

using namespace lir;

// "pattern nn.t { ... BODY } workload w { WORKLOAD }"
inline std::string pattern(const std::string& body, const std::string& workload) {
  return "pattern nn.t {\n  level operator\n  source \"test\"\n" + body + "\n}\nworkload w { " + workload +
         " }\n";
}

// A temp, a pure definition, an ordered update of it (each row reads the previous one) and an
// integer output: four stages.
inline const char* const kFourStages = R"(
  params M, N
  input  x : f32[M, N]
  input  b : f32[N]
  output y : f32[M, N]
  output c : i32[M]
  temp   t : f32[N]
  t[j] = b[j] * 2.0
  y[i, j] = x[i, j] + t[j]
  for i in 1..M: y[i, j] = y[i - 1, j] + y[i, j]
  c[i] = cast(i32, i) + 1
)";

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

// ------------------------------------------------------------------------ the gpu passes
// The native lowering for cuda / opencl, stopped after the pass `stop`.
inline LowerOptions cuda_like_options(const std::string& stop) {
  LowerOptions o = lower_options_for(ir::Target::Cuda);
  o.stop_after = stop;
  return o;
}
inline LowerOptions opencl_like_options(const std::string& stop) {
  LowerOptions o = lower_options_for(ir::Target::OpenCL);
  o.stop_after = stop;
  return o;
}

// The statements of `body` that satisfy `pred`, in program order.
template <typename Pred>
std::vector<const Stmt*> find_stmts(const Stmt& body, Pred pred) {
  std::vector<const Stmt*> found;
  for_each_stmt(body, [&](const Stmt& s) {
    if (pred(s)) found.push_back(&s);
  });
  return found;
}

inline std::vector<const Stmt*> kernels_of(const Func& f) {
  return find_stmts(*f.body, [](const Stmt& s) { return s.kind == StmtKind::Kernel; });
}

// The For kinds of the loops in `body`, outermost first in program order: "i:gpu_grid_stride j:serial".
inline std::string loop_kinds(const Stmt& body) {
  std::string s;
  for_each_stmt(body, [&](const Stmt& x) {
    if (x.kind == StmtKind::For) s += (s.empty() ? "" : " ") + x.name + ":" + std::string(for_kind_name(x.for_kind));
  });
  return s;
}

// ------------------------------------------------------------------------ schedules
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
