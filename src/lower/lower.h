// The native compiler's lowering: a verified workload to a loop-IR function, ready for an emitter
// (codegen/c_like_emitter.h). lower.cpp lists the passes in order, as data: one row per pass, its
// name and its entry function; each is one .h/.cpp pair in src/lower/ that can be run and tested
// alone. Where the rows are run, one place logs (EKB_LOG_LIR=1: each pass's name and the loop IR
// after it, on stderr), stops (LowerOptions::stop_after) and checks the loop IR after every pass
// (EKB_VERIFY_LIR=1 or LowerOptions::verify: lir/verify_lir.h; the test suite turns it on).
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "ir/instance.h"
#include "ir/target.h"
#include "lir/loop_ir.h"
#include "lower/gpu_stages.h"
#include "lower/plan_storage.h"

namespace ekb::lower {

struct LowerOptions {
  // f16/bf16 arithmetic in f32 (false: keep half arithmetic, for targets that have it).
  bool widen_half_precision = true;
  // Store temps declared f16/bf16 as such (default: in f32; see widen_half_precision.h).
  bool keep_half_temps = false;
  // In f64 the float arithmetic whose rounding is not a small error: values converted to integers
  // or compared, arguments of sin/cos/tan (promote_to_f64.h).
  bool promote_to_f64 = true;
  bool simplify = true;
  // Split cpu loops at the iterations where boundary reads stay inside their buffers
  // (partition_loops.h); gpu targets never do.
  bool partition_loops = true;
  // The target the kernel is lowered for.
  ir::Target target = ir::Target::Cpu;
  // Apply the module's schedule and memory blocks for `target` (and those without a target);
  // false ignores them (the default lowering of an IR solution's compute layer).
  bool apply_layers = true;
  StoragePlanOptions storage;
  // For a gpu target: its kernel language's properties. Set, the function becomes kernels
  // (map_grid_stride, outline_kernels, lower_thread_reductions); unset, it stays one loop nest.
  std::optional<GpuLowerOptions> gpu;
  // Stop after the pass of this name (for `ekb emit --lir` and tests); empty runs them all.
  std::string stop_after;
  // Check the loop IR after every pass (lir/verify_lir.h), as EKB_VERIFY_LIR=1 does.
  bool verify = false;
};

// The module's compute layer as a loop nest, with its schedule layer for options.target
// applied (without one: the default lowering, a plain single-threaded loop nest). Throws
// ScheduleError (lower/schedule_error.h) for a directive that cannot be applied.
lir::Func lower(const ir::Instance& inst, const LowerOptions& options = {});

// The options of the native compiler's lowering for `target`, what the baseline, IR solutions and
// `ekb emit` use: cpu's defaults; for cuda and opencl, every temp in the scratch workspace and the
// kernel language's properties for the gpu passes.
LowerOptions lower_options_for(ir::Target target);

// The pass names, in order.
const std::vector<std::string>& pass_names();

}  // namespace ekb::lower
