// Applies a module's schedule layer to the loop IR, directive by directive in file order
// (docs/IR.md, "Schedule and memory layers"): `schedule cpu { ... }` blocks and blocks without a
// target, when lowering for cpu; `schedule gpu` blocks and those without a target when lowering for
// a gpu backend (target "cuda" or "opencl"). Each directive is one pass of its own file:
//   split, tile         schedule_split.h     (tail strategies guard, shift_inwards, round_up, peel)
//   reorder             schedule_reorder.h   (with materialize_reduction.h for reduction loops)
//   fuse                schedule_fuse.h
//   parallel, vectorize, unroll   schedule_loop_kinds.h
//   rfactor             schedule_rfactor.h
//   compute_at, compute_inline, compute_root   schedule_compute_at.h
//   pipeline            schedule_pipeline.h  (cpu only: a consumer one iteration late, fused into
//                                             a producer's loop, its temps in two slots)
//   bind                schedule_bind.h      (gpu targets only; the kernels it makes are checked
//                                             as a whole after the last directive)
// and `memory cpu { ... }` blocks, in the same file order:
//   cache_read, cache_write   memory_cache.h     (bounds inference in region.h)
//   layout, align             memory_layout.h
//   double_buffer             memory_double_buffer.h on gpu; an error on cpu (it overlaps copies
//                             into gpu shared memory)
// Runs between lower_reductions (reduction loops exist as loops) and flatten_storage (accesses
// still name tensor dimensions). A directive that is illegal, or has no meaning on cpu (bind,
// double_buffer, the shared scope), throws ScheduleError whose message is
// "file:line:col: error: 'DIRECTIVE': why" plus a hint line.
#pragma once
#include <string_view>

#include "ir/ast.h"
#include "lower/loop_ir.h"

namespace ekb::lir {

void apply_schedule(Func& f, const ir::Module& m, std::string_view target = "cpu");

// Whether the module has layer blocks that apply to `target`.
bool has_layers_for(const ir::Module& m, std::string_view target);

}  // namespace ekb::lir
