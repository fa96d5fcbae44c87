#include "lower/apply_schedule.h"

#include "ir/diagnostics.h"
#include "ir/printer.h"
#include "lower/memory_cache.h"
#include "lower/memory_double_buffer.h"
#include "lower/memory_layout.h"
#include "lower/schedule_bind.h"
#include "lower/schedule_compute_at.h"
#include "lower/schedule_fuse.h"
#include "lower/schedule_loop_kinds.h"
#include "lower/schedule_loops.h"
#include "lower/schedule_pipeline.h"
#include "lower/schedule_reorder.h"
#include "lower/schedule_rfactor.h"
#include "lower/schedule_split.h"

namespace ekb::lir {

namespace {

bool is_gpu_target(std::string_view target) { return target == "gpu" || target == "cuda" || target == "opencl"; }

// A block without a target applies everywhere; `gpu` to every gpu backend (cuda, opencl).
bool applies(const ir::LayerBlock& b, std::string_view target) {
  return b.target.empty() || b.target == target || (b.target == "gpu" && is_gpu_target(target));
}

// The directive's positional arguments as text ("C", "C.update(0)", "io", "8"), and its tail.
struct Args {
  std::vector<std::string> text;
  std::vector<int64_t> ints;
  TailStrategy tail = TailStrategy::Guard;
  int64_t lines = 0;  // prefetch's lines=N (0: the lines the iteration's reads span)

  explicit Args(const ir::Directive& d) {
    for (const ir::DirectiveArg& a : d.args) {
      if (a.key == "tail") {
        if (auto t = tail_strategy(a.text)) tail = *t;
        continue;
      }
      if (a.key == "lines") {
        lines = a.int_value;
        continue;
      }
      if (a.kind == ir::DirectiveArg::Kind::Call)
        text.push_back(a.text + "(" + (a.args.empty() ? "" : std::to_string(a.args[0].int_value)) + ")");
      else
        text.push_back(a.kind == ir::DirectiveArg::Kind::Int ? std::to_string(a.int_value) : a.text);
      ints.push_back(a.int_value);
    }
  }
  void need(size_t n, const ir::Directive& d) const {
    if (text.size() != n)
      throw ScheduleError("'" + d.verb + "' takes " + std::to_string(n) + " arguments, found " + std::to_string(text.size()));
  }
};

void apply_directive(Func& f, const ir::Directive& d, bool gpu) {
  Args a(d);
  const std::string& v = d.verb;
  if (v == "split") {
    a.need(5, d);
    return split(f, a.text[0], a.text[1], a.ints[2], a.text[3], a.text[4], a.tail);
  }
  if (v == "tile") {
    a.need(9, d);
    return tile(f, a.text[0], a.text[1], a.text[2], a.ints[3], a.ints[4], a.text[5], a.text[6], a.text[7], a.text[8],
                a.tail);
  }
  if (v == "reorder") {
    if (a.text.size() < 3) throw ScheduleError("'reorder' takes a stage and at least two loops");
    return reorder(f, a.text[0], {a.text.begin() + 1, a.text.end()});
  }
  if (v == "fuse") {
    a.need(4, d);
    return fuse(f, a.text[0], a.text[1], a.text[2], a.text[3]);
  }
  if (v == "parallel" && gpu)
    throw ScheduleError("parallel runs a loop on cpu threads; it has no meaning on gpu",
                        "bind the loop to block.x|y|z or thread.x|y|z");
  if (v == "parallel") {
    a.need(2, d);
    return parallelize(f, a.text[0], a.text[1]);
  }
  if (v == "vectorize") {
    a.need(3, d);
    return vectorize(f, a.text[0], a.text[1], a.ints[2]);
  }
  if (v == "unroll") {
    a.need(3, d);
    return unroll(f, a.text[0], a.text[1], a.ints[2]);
  }
  if (v == "rfactor") {
    a.need(3, d);
    return rfactor(f, a.text[0], a.text[1], a.text[2]);
  }
  if (v == "bind" && gpu) {
    a.need(3, d);
    return bind_loop(f, a.text[0], a.text[1], a.text[2]);
  }
  if (v == "bind")
    throw ScheduleError("bind maps loops to GPU blocks and threads; it has no meaning on cpu",
                        "move it into a `schedule gpu` block, or use parallel/vectorize");
  if (v == "compute_at") {
    a.need(3, d);
    return compute_at(f, a.text[0], a.text[1], a.text[2]);
  }
  if (v == "compute_inline") {
    a.need(1, d);
    return compute_inline(f, a.text[0]);
  }
  if (v == "pipeline" && gpu)
    throw ScheduleError("pipeline overlaps a cpu thread's stores with its computation; it has no meaning on gpu",
                        "on gpu, double_buffer a shared cache to overlap loads with compute");
  if (v == "pipeline") {
    a.need(4, d);
    return pipeline(f, a.text[0], a.text[1], a.text[2], a.text[3]);
  }
  if (v == "compute_root") {
    a.need(1, d);
    return compute_root(f, a.text[0]);
  }
  throw ScheduleError("unknown schedule directive '" + v + "'");
}

LayoutSpec layout_spec(const ir::Directive& d) {
  const ir::DirectiveArg& how = d.args.at(1);
  if (how.kind != ir::DirectiveArg::Kind::Call || (how.text != "pack" && how.text != "order"))
    throw ScheduleError("expected pack(dim, factor) or order(dims...)");
  LayoutSpec spec;
  spec.pack = how.text == "pack";
  for (const ir::DirectiveArg& x : how.args) spec.dims.push_back(x.int_value);
  if (spec.pack) {
    if (spec.dims.size() != 2) throw ScheduleError("pack takes 2 arguments (dim, factor)");
    spec.factor = spec.dims[1];
    spec.dims.pop_back();
  }
  return spec;
}

void apply_memory_directive(Func& f, const ir::Directive& d, bool gpu) {
  Args a(d);
  const std::string& v = d.verb;
  if (v == "cache_read") {
    a.need(5, d);
    return cache_read(f, a.text[0], a.text[1], a.text[2], a.text[3], a.text[4], gpu);
  }
  if (v == "cache_write") {
    a.need(4, d);
    return cache_write(f, a.text[0], a.text[1], a.text[2], a.text[3], gpu);
  }
  if (v == "layout") {
    a.need(2, d);
    return layout(f, a.text[0], layout_spec(d));
  }
  if (v == "align") {
    a.need(2, d);
    return align(f, a.text[0], a.ints[1]);
  }
  if (v == "prefetch" && !gpu) {
    a.need(4, d);
    return prefetch(f, a.text[0], a.text[1], a.text[2], a.ints[3], a.lines);
  }
  if (v == "prefetch")
    throw ScheduleError("prefetch applies to cpu loops (software prefetches into the caches)",
                        "on gpu, cache_read the tile into shared memory instead");
  if (v == "nontemporal" && !gpu) {
    a.need(1, d);
    return nontemporal(f, a.text[0]);
  }
  if (v == "nontemporal")
    throw ScheduleError("nontemporal applies to cpu stores (streaming stores past the caches)",
                        "on gpu, remove it: stores are written back from L2 without being read first");
  if (v == "double_buffer" && gpu) {
    a.need(1, d);
    return double_buffer(f, a.text[0]);
  }
  if (v == "double_buffer")
    // Overlapping the next tile's load with this tile's compute needs an asynchronous copy engine;
    // on cpu the hardware prefetchers already stream ahead, and a second buffer would change nothing.
    throw ScheduleError("double_buffer applies to gpu shared memory (an asynchronous copy overlapped with compute)",
                        "on cpu, remove it: hardware prefetching overlaps the loads of the next tile");
  throw ScheduleError("unknown memory directive '" + v + "'");
}

}  // namespace

bool has_layers_for(const ir::Module& m, std::string_view target) {
  for (const ir::LayerBlock& b : m.layers)
    if (applies(b, target) && !b.directives.empty()) return true;
  return false;
}

void apply_schedule(Func& f, const ir::Module& m, std::string_view target) {
  const bool gpu = is_gpu_target(target);
  const ir::LayerBlock* last = nullptr;
  for (const ir::LayerBlock& b : m.layers) {
    if (!applies(b, target)) continue;
    last = &b;
    for (const ir::Directive& d : b.directives) {
      try {
        if (b.kind == ir::LayerKind::Memory) apply_memory_directive(f, d, gpu);
        else apply_directive(f, d, gpu);
      } catch (const ScheduleError& e) {
        ir::Diagnostic diag{m.file, d.loc, "'" + ir::print_directive(d) + "': " + e.what(), e.hint()};
        throw ScheduleError(diag.format());
      }
    }
  }
  // The kernels the bound loops make, checked as a whole (launch limits, races, barriers).
  if (gpu && last) {
    try {
      finish_gpu_schedule(f);
    } catch (const ScheduleError& e) {
      ir::Diagnostic diag{m.file, last->loc, std::string("the gpu schedule: ") + e.what(), e.hint()};
      throw ScheduleError(diag.format());
    }
  }
}

}  // namespace ekb::lir
