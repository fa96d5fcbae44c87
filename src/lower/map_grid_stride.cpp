#include "lower/map_grid_stride.h"

#include <algorithm>
#include <functional>

#include "lir/mutator.h"
#include "lower/schedule_bind.h"

namespace ekb::lower {

using namespace lir;

namespace {

bool is_param(const Func& f, const std::string& name) {
  return std::any_of(f.params.begin(), f.params.end(), [&](const Param& p) { return p.name == name; });
}

// Whether the launch can compute `e` before the kernel runs.
bool launch_computable(const Func& f, const Expr& e, const GpuLowerOptions& options) {
  bool host_computable = true;
  for_each_expr(e, [&](const Expr& x) {
    host_computable &= x.kind != ExprKind::Load && x.kind != ExprKind::Reduce &&
                       (x.kind != ExprKind::Var || is_param(f, x.name));
  });
  if (!host_computable || !options.launch_description) return host_computable;
  // The description's expressions: no floor division (its / truncates), no float.
  std::function<bool(const Expr&)> spellable = [&](const Expr& x) {
    switch (x.kind) {
      case ExprKind::IntImm:
      case ExprKind::Var:
        return true;
      case ExprKind::Cast:
        return !ir::is_float(x.type) && !ir::is_float(x.args[0]->type) && spellable(*x.args[0]);
      case ExprKind::Binary:
        return (x.bin_op == BinOp::Add || x.bin_op == BinOp::Sub || x.bin_op == BinOp::Mul ||
                x.bin_op == BinOp::Min || x.bin_op == BinOp::Max) &&
               spellable(*x.args[0]) && spellable(*x.args[1]);
      default:
        return false;
    }
  };
  return spellable(e);
}

bool is_pure_loop(const Func& f, const std::string& var) {
  for (const Stage& st : f.stages)
    for (const StageLoop& l : st.loops)
      if (std::find(l.vars.begin(), l.vars.end(), var) != l.vars.end()) return l.role == LoopRole::Pure;
  return false;  // not a stage's loop: nothing says its iterations are independent
}

// Storage that all threads share (not a private array of one thread).
bool allocates_shared_storage(const Stmt& s) {
  bool found = false;
  for_each_stmt(s, [&](const Stmt& x) {
    found |= x.kind == StmtKind::Allocate && x.scope != MemoryScope::Stack && x.scope != MemoryScope::Local;
  });
  return found;
}

// The stage with its leading mappable loops made GpuGridStride.
StmtP map_stage(const Func& f, const StmtP& s, const GpuLowerOptions& options) {
  if (s->kind != StmtKind::For || !is_pure_loop(f, s->name)) return s;
  // Bounds known at launch, not depending on an outer mapped loop: a rectangular space.
  if (!launch_computable(f, *s->min, options) || !launch_computable(f, *s->extent, options)) return s;
  // Storage shared by all threads inside the loop would be a race between iterations.
  if (allocates_shared_storage(*s->body)) return s;
  auto n = std::make_shared<Stmt>(*s);
  n->for_kind = ForKind::GpuGridStride;
  n->body = map_stage(f, s->body, options);
  return n;
}

}  // namespace

void map_grid_stride(Func& f, const GpuLowerOptions& options) {
  if (!f.body) return;
  GpuStages g = gpu_stages(f);
  for (StmtP& s : g.stages)
    if (!has_gpu_bound_loops(*s)) s = map_stage(f, s, options);
  f.body = g.build();
}

}  // namespace ekb::lower
