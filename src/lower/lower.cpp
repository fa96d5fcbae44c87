#include "lower/lower.h"

#include <algorithm>
#include <stdexcept>

#include "lower/apply_schedule.h"
#include "lower/flatten_storage.h"
#include "lower/insert_prefetches.h"
#include "lower/lower_boundaries.h"
#include "lower/lower_definitions.h"
#include "lower/lower_reductions.h"
#include "lower/lower_thread_reductions.h"
#include "lower/map_grid_stride.h"
#include "lower/outline_kernels.h"
#include "lower/partition_loops.h"
#include "lower/promote_to_f64.h"
#include "lower/simplify.h"
#include "lower/vectorize_cooperative_copies.h"
#include "lower/widen_half_precision.h"

namespace ekb::lir {

const std::vector<std::string>& pass_names() {
  static const std::vector<std::string> names = {
      "lower_definitions", "lower_reductions", "apply_schedule",  "partition_loops", "lower_boundaries",
      "widen_half_precision", "promote_to_f64", "flatten_storage", "plan_storage",  "simplify",
      "insert_prefetches", "map_grid_stride", "outline_kernels",
      "lower_thread_reductions", "vectorize_cooperative_copies"};
  return names;
}

Func lower(const ir::Instance& inst, const LowerOptions& options) {
  const std::string& stop = options.stop_after;
  if (!stop.empty() && std::find(pass_names().begin(), pass_names().end(), stop) == pass_names().end())
    throw std::invalid_argument("unknown lowering pass '" + stop + "'");

  // Pure definitions and updates as loop nests; reductions and boundary reads still high-level.
  Func f = lower_definitions(inst);
  if (stop == "lower_definitions") return f;
  // Reductions as scalar accumulators and their loops.
  lower_reductions(f);
  if (stop == "lower_reductions") return f;
  // The module's schedule layer for the target: split, tile, reorder, fuse, parallel, ...
  if (!options.schedule_target.empty()) apply_schedule(f, *inst.module, options.schedule_target);
  if (stop == "apply_schedule") return f;
  // Loops split where boundary reads stay inside their buffers (simplify then drops the checks).
  const bool cpu_nest = options.schedule_target.empty() || options.schedule_target == "cpu";
  if (options.partition_loops && cpu_nest) partition_loops(f);
  if (stop == "partition_loops") return f;
  // pad/edge/mirror reads as selects and index clamps.
  lower_boundaries(f);
  if (stop == "lower_boundaries") return f;
  // Half-precision values computed in f32.
  if (options.widen_half_precision) widen_half_precision(f, options.keep_half_temps);
  if (stop == "widen_half_precision") return f;
  // f64 where f32 rounding would change integers or blow up: conversions, comparisons, sin/cos.
  if (options.promote_to_f64) promote_to_f64(f);
  if (stop == "promote_to_f64") return f;
  // Multi-dimensional accesses as flat row-major indices.
  flatten_storage(f);
  if (stop == "flatten_storage") return f;
  // Temps on the stack or in the declared scratch workspace.
  plan_storage(f, options.storage);
  if (stop == "plan_storage") return f;
  // Constant folding, bounds-based simplification, cheap division.
  if (options.simplify) simplify(f);
  if (stop == "simplify") return f;
  // cpu: the prefetch directive's software prefetches as statements.
  if (cpu_nest) insert_prefetches(f);
  if (stop == "insert_prefetches") return f;
  // gpu: the outer independent loops of each stage without bound loops spread over all threads.
  if (options.gpu) map_grid_stride(f, *options.gpu);
  if (stop == "map_grid_stride") return f;
  // gpu: one kernel per stage (or run of sequential stages), with its launch.
  if (options.gpu) outline_kernels(f, *options.gpu);
  if (stop == "outline_kernels") return f;
  // gpu: the reduction loops bound to threads combine their parts over the block.
  if (options.gpu) lower_thread_reductions(f, *options.gpu);
  if (stop == "lower_thread_reductions") return f;
  // gpu: how a block's threads share each copy into shared memory (float4 where aligned).
  if (options.gpu) vectorize_cooperative_copies(f);
  return f;
}

}  // namespace ekb::lir
