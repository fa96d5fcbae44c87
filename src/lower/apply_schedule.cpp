#include "lower/apply_schedule.h"

#include <optional>
#include <stdexcept>

#include "ir/diagnostics.h"
#include "ir/directives.h"
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

namespace ekb::lower {

using namespace lir;

namespace {

// The directive's positional arguments as text ("C", "C.update(0)", "io", "8") and as integers,
// and its keyword arguments.
struct Args {
  const ir::Directive& directive;
  std::vector<std::string> text;
  std::vector<int64_t> ints;
  TailStrategy tail = TailStrategy::Guard;
  int64_t lines = 0;  // prefetch's lines=N (0: the lines the iteration's reads span)

  explicit Args(const ir::Directive& d) : directive(d) {
    if (const ir::DirectiveInfo* info = ir::find_directive(d.verb))  // the table's default tail
      for (const ir::DirectiveParam& k : info->keywords)
        if (k.kind == ir::DirectiveArgKind::Tail)
          if (auto t = tail_strategy(k.default_value)) tail = *t;
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
};

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

// The pass entry function of each directive of ir::directive_table() (which names its pass).
// Arguments arrive checked against the table: their number, kinds and the target.
struct DirectivePass {
  std::string_view verb;
  void (*apply)(Func& f, const Args& a, ir::Target target);
};

// The directive's tail strategy on `target`: masks predicate the cpu's SIMD lanes.
TailStrategy tail_on(const Args& a, ir::Target target) {
  if (a.tail == TailStrategy::Mask && ir::is_gpu(target))
    throw ScheduleError("tail=mask runs the last block as a masked cpu vector; a gpu has no SIMD lanes to mask",
                        "use tail=guard (each thread tests its own index)");
  return a.tail;
}

const DirectivePass kDirectivePasses[] = {
    {"split",
     [](Func& f, const Args& a, ir::Target t) {
       split(f, a.text[0], a.text[1], a.ints[2], a.text[3], a.text[4], tail_on(a, t));
     }},
    {"tile",
     [](Func& f, const Args& a, ir::Target t) {
       tile(f, a.text[0], a.text[1], a.text[2], a.ints[3], a.ints[4], a.text[5], a.text[6], a.text[7], a.text[8],
            tail_on(a, t));
     }},
    {"reorder", [](Func& f, const Args& a, ir::Target) { reorder(f, a.text[0], {a.text.begin() + 1, a.text.end()}); }},
    {"fuse", [](Func& f, const Args& a, ir::Target) { fuse(f, a.text[0], a.text[1], a.text[2], a.text[3]); }},
    {"parallel", [](Func& f, const Args& a, ir::Target) { parallelize(f, a.text[0], a.text[1]); }},
    {"vectorize",
     [](Func& f, const Args& a, ir::Target t) { vectorize(f, a.text[0], a.text[1], a.ints[2], tail_on(a, t)); }},
    {"unroll", [](Func& f, const Args& a, ir::Target) { unroll(f, a.text[0], a.text[1], a.ints[2]); }},
    {"bind", [](Func& f, const Args& a, ir::Target) { bind_loop(f, a.text[0], a.text[1], a.text[2]); }},
    {"compute_at", [](Func& f, const Args& a, ir::Target) { compute_at(f, a.text[0], a.text[1], a.text[2]); }},
    {"compute_inline", [](Func& f, const Args& a, ir::Target) { compute_inline(f, a.text[0]); }},
    {"compute_root", [](Func& f, const Args& a, ir::Target) { compute_root(f, a.text[0]); }},
    {"rfactor", [](Func& f, const Args& a, ir::Target) { rfactor(f, a.text[0], a.text[1], a.text[2]); }},
    {"pipeline", [](Func& f, const Args& a, ir::Target) { pipeline(f, a.text[0], a.text[1], a.text[2], a.text[3]); }},
    {"cache_read",
     [](Func& f, const Args& a, ir::Target t) {
       cache_read(f, a.text[0], a.text[1], a.text[2], a.text[3], a.text[4], ir::is_gpu(t));
     }},
    {"cache_write",
     [](Func& f, const Args& a, ir::Target t) {
       cache_write(f, a.text[0], a.text[1], a.text[2], a.text[3], ir::is_gpu(t));
     }},
    {"layout", [](Func& f, const Args& a, ir::Target) { layout(f, a.text[0], layout_spec(a.directive)); }},
    {"double_buffer", [](Func& f, const Args& a, ir::Target) { double_buffer(f, a.text[0]); }},
    {"align", [](Func& f, const Args& a, ir::Target) { align(f, a.text[0], a.ints[1]); }},
    {"nontemporal", [](Func& f, const Args& a, ir::Target) { nontemporal(f, a.text[0]); }},
    {"prefetch",
     [](Func& f, const Args& a, ir::Target) { prefetch(f, a.text[0], a.text[1], a.text[2], a.ints[3], a.lines); }},
};

void apply_directive(Func& f, const ir::LayerBlock& b, const ir::Directive& d, ir::Target target) {
  const ir::DirectiveInfo* info = ir::find_directive(d.verb);
  if (!info || info->layer != b.kind)
    throw ScheduleError("unknown " + std::string(ir::layer_name(b.kind)) + " directive '" + d.verb + "'");
  // A block without a target reaches here with directives the verifier could not refuse.
  if (!info->targets.contains(target))
    throw ScheduleError(std::string(info->off_target), std::string(info->off_target_hint));
  Args a(d);
  const size_t n = info->min_arguments();
  if (info->variadic() ? a.text.size() < n : a.text.size() != n)
    throw ScheduleError("'" + d.verb + "' takes " + (info->variadic() ? "at least " : "") + std::to_string(n) +
                        " arguments, found " + std::to_string(a.text.size()));
  for (const DirectivePass& p : kDirectivePasses)
    if (p.verb == d.verb) return p.apply(f, a, target);
  throw std::logic_error("no pass applies the directive '" + d.verb + "'");
}

}  // namespace

std::vector<std::string> directive_pass_verbs() {
  std::vector<std::string> out;
  for (const DirectivePass& p : kDirectivePasses) out.emplace_back(p.verb);
  return out;
}

void apply_schedule(Func& f, const ir::Module& m, ir::Target target) {
  const ir::LayerBlock* last = nullptr;
  for (const ir::LayerBlock& b : m.layers) {
    if (!ir::layer_applies(b, target)) continue;
    last = &b;
    for (const ir::Directive& d : b.directives) {
      try {
        apply_directive(f, b, d, target);
      } catch (const ScheduleError& e) {
        ir::Diagnostic diag{m.file, d.loc, "'" + ir::print_directive(d) + "': " + e.what(), e.hint()};
        throw ScheduleError(diag.format());
      }
    }
  }
  if (!ir::is_gpu(target) && last)
    if (std::string why = masked_tail_problem(f); !why.empty()) {
      ir::Diagnostic diag{m.file, last->loc, "the cpu schedule: " + why,
                          "vectorize that loop (or one inside it), or split it with tail=guard or tail=peel"};
      throw ScheduleError(diag.format());
    }
  // The kernels the bound loops make, checked as a whole (launch limits, races, barriers).
  if (ir::is_gpu(target) && last) {
    try {
      finish_gpu_schedule(f);
    } catch (const ScheduleError& e) {
      ir::Diagnostic diag{m.file, last->loc, std::string("the gpu schedule: ") + e.what(), e.hint()};
      throw ScheduleError(diag.format());
    }
  }
}

}  // namespace ekb::lower
