#include "lower/lower.h"

#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <stdexcept>
#include <string_view>

#include "lir/simplify.h"
#include "lir/verify_lir.h"
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
#include "lower/vectorize_cooperative_copies.h"
#include "lower/widen_half_precision.h"

namespace ekb::lower {

using namespace lir;

namespace {

// One pass of the pipeline: its name (for --after, the log and the verifier's reports), its entry
// function, and the forms of the loop IR it establishes for the passes after it (verify_lir.h).
// A pass that does not apply to the options (the target, a switched-off step) leaves f as it is.
struct Pass {
  std::string_view name;
  void (*run)(Func& f, const ir::Instance& inst, const LowerOptions& options);
  LirForm establishes = LirForm::None;
};

const Pass kPasses[] = {
    // Pure definitions and updates as loop nests; reductions and boundary reads still high-level.
    {"lower_definitions", [](Func& f, const ir::Instance& inst, const LowerOptions&) { f = lower_definitions(inst); }},
    // Reductions as scalar accumulators and their loops.
    {"lower_reductions", [](Func& f, const ir::Instance&, const LowerOptions&) { lower_reductions(f); },
     LirForm::NoReductions},
    // The module's schedule and memory layers for the target: split, tile, reorder, fuse, parallel, ...
    {"apply_schedule",
     [](Func& f, const ir::Instance& inst, const LowerOptions& o) {
       if (o.apply_layers) apply_schedule(f, *inst.module, o.target);
     }},
    // Loops split where boundary reads stay inside their buffers (simplify then drops the checks).
    {"partition_loops",
     [](Func& f, const ir::Instance&, const LowerOptions& o) {
       if (o.partition_loops && o.target == ir::Target::Cpu) partition_loops(f);
     }},
    // pad/edge/mirror reads as selects and index clamps.
    {"lower_boundaries", [](Func& f, const ir::Instance&, const LowerOptions&) { lower_boundaries(f); },
     LirForm::NoBoundaries},
    // Half-precision values computed in f32.
    {"widen_half_precision",
     [](Func& f, const ir::Instance&, const LowerOptions& o) {
       if (o.widen_half_precision) widen_half_precision(f, o.keep_half_temps);
     }},
    // f64 where f32 rounding would change integers or blow up: conversions, comparisons, sin/cos.
    {"promote_to_f64",
     [](Func& f, const ir::Instance&, const LowerOptions& o) {
       if (o.promote_to_f64) promote_to_f64(f);
     }},
    // Multi-dimensional accesses as flat row-major indices.
    {"flatten_storage", [](Func& f, const ir::Instance&, const LowerOptions&) { flatten_storage(f); },
     LirForm::FlatAccesses},
    // Temps on the stack or in the declared scratch workspace.
    {"plan_storage", [](Func& f, const ir::Instance&, const LowerOptions& o) { plan_storage(f, o.storage); }},
    // Constant folding, bounds-based simplification, cheap division.
    {"simplify",
     [](Func& f, const ir::Instance&, const LowerOptions& o) {
       if (o.simplify) simplify(f);
     }},
    // cpu: the prefetch directive's software prefetches as statements.
    {"insert_prefetches",
     [](Func& f, const ir::Instance&, const LowerOptions& o) {
       if (o.target == ir::Target::Cpu) insert_prefetches(f);
     }},
    // gpu: the outer independent loops of each stage without bound loops spread over all threads.
    {"map_grid_stride",
     [](Func& f, const ir::Instance&, const LowerOptions& o) {
       if (o.gpu) map_grid_stride(f, *o.gpu);
     }},
    // gpu: one kernel per stage (or run of sequential stages), with its launch.
    {"outline_kernels",
     [](Func& f, const ir::Instance&, const LowerOptions& o) {
       if (o.gpu) outline_kernels(f, *o.gpu);
     }},
    // gpu: the reduction loops bound to threads combine their parts over the block.
    {"lower_thread_reductions",
     [](Func& f, const ir::Instance&, const LowerOptions& o) {
       if (o.gpu) lower_thread_reductions(f, *o.gpu);
     }},
    // gpu: how a block's threads share each copy into shared memory (float4 where aligned).
    {"vectorize_cooperative_copies",
     [](Func& f, const ir::Instance&, const LowerOptions& o) {
       if (o.gpu) vectorize_cooperative_copies(f);
     }},
};

bool environment_flag(const char* name) {
  const char* v = std::getenv(name);
  return v && std::string_view(v) == "1";
}

}  // namespace

LowerOptions lower_options_for(ir::Target target) {
  LowerOptions o;
  o.target = target;
  if (!ir::is_gpu(target)) return o;
  o.storage.max_stack_bytes = 0;  // a stack (private) array would not outlive the kernel that writes it
  o.gpu.emplace();
  if (target == ir::Target::Cuda) {
    // __shfl_xor_sync has overloads for 32- and 64-bit integers and floats.
    o.gpu->warp_shuffle_types = {ScalarType::F32, ScalarType::F64, ScalarType::I32, ScalarType::I64, ScalarType::Index};
  } else {
    o.gpu->launch_description = true;  // the ekb-launch description (docs/ABI.md)
    // OpenCL C 1.2 has no shuffles; NVIDIA's compiler takes inline PTX, exchanging 32-bit values.
    o.gpu->warp_shuffle_types = {ScalarType::F32, ScalarType::I32};
    o.gpu->warp_shuffles_conditional = true;
  }
  return o;
}

const std::vector<std::string>& pass_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    for (const Pass& p : kPasses) out.emplace_back(p.name);
    return out;
  }();
  return names;
}

Func lower(const ir::Instance& inst, const LowerOptions& options) {
  const std::string& stop = options.stop_after;
  if (!stop.empty() && std::find(pass_names().begin(), pass_names().end(), stop) == pass_names().end())
    throw std::invalid_argument("unknown lowering pass '" + stop + "'");
  const bool verify = options.verify || environment_flag("EKB_VERIFY_LIR");
  const bool log = environment_flag("EKB_LOG_LIR");
  Func f;
  LirForm form = LirForm::None;
  for (const Pass& pass : kPasses) {
    pass.run(f, inst, options);
    form = form | pass.establishes;
    if (log) std::cerr << "lower: after " << pass.name << "\n" << to_string(f);
    if (verify) verify_lir(f, form, pass.name);
    if (pass.name == stop) break;
  }
  return f;
}

}  // namespace ekb::lower
