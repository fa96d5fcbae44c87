#include "lower/outline_kernels.h"

#include <set>

#include "lir/mutator.h"
#include "lower/schedule_bind.h"

namespace ekb::lower {

using namespace lir;

namespace {

void add_names(const Expr& e, std::set<std::string>& names) {
  for_each_expr(e, [&](const Expr& x) {
    if (x.kind == ExprKind::Var || x.kind == ExprKind::Load) names.insert(x.name);
  });
}

// `code` inside the statements of `context` that it uses, and those that these use, in their order.
StmtP with_context(const std::vector<StmtP>& context, const StmtP& code) {
  std::set<std::string> used;
  for_each_expr(*code, [&](const Expr& x) {
    if (x.kind == ExprKind::Var || x.kind == ExprKind::Load) used.insert(x.name);
  });
  for_each_stmt(*code, [&](const Stmt& x) {
    if (x.kind == StmtKind::Store) used.insert(x.name);
  });
  std::vector<bool> needed(context.size(), false);
  for (size_t i = context.size(); i-- > 0;) {
    if (!used.count(context[i]->name)) continue;
    needed[i] = true;
    if (context[i]->kind == StmtKind::LetStmt) add_names(*context[i]->value, used);
  }
  StmtP s = code;
  for (size_t i = context.size(); i-- > 0;) {
    if (!needed[i]) continue;
    auto n = std::make_shared<Stmt>(*context[i]);
    n->body = s;
    s = n;
  }
  return s;
}

// Takes the stage's shared allocations out of it, in program order.
class SharedHoister : public Mutator {
 public:
  using Mutator::mutate;
  StmtP mutate(const StmtP& s) override {
    if (s->kind == StmtKind::Allocate && s->scope == MemoryScope::Shared) {
      shared.push_back(s);
      return mutate(s->body);
    }
    return mutate_children(s);
  }
  std::vector<StmtP> shared;
};

// Stores outside the thread loops and cooperative copies, to buffers allocated outside the stage,
// made by the block's first thread only.
class FirstThreadStores : public Mutator {
 public:
  explicit FirstThreadStores(const Stmt& stage) {
    for_each_stmt(stage, [&](const Stmt& x) {
      if (x.kind == StmtKind::Allocate) own_.insert(x.name);
    });
  }
  using Mutator::mutate;
  StmtP mutate(const StmtP& s) override {
    const bool per_thread = s->kind == StmtKind::For &&
                            (s->for_kind == ForKind::GpuThread || s->for_kind == ForKind::GpuCooperative);
    if (per_thread) {
      ++per_thread_depth_;
      StmtP r = mutate_children(s);
      --per_thread_depth_;
      return r;
    }
    if (s->kind == StmtKind::Store && per_thread_depth_ == 0 && !own_.count(s->name))
      return make_if(binary(BinOp::Eq, call(Intrinsic::ThreadRank, ScalarType::Index, {}), index_imm(0)), s);
    return mutate_children(s);
  }

 private:
  std::set<std::string> own_;
  int per_thread_depth_ = 0;
};

StmtP bound_kernel(const Func& f, const std::vector<StmtP>& context, const StmtP& stage, const std::string& name) {
  Launch launch;
  launch.kind = LaunchKind::Grid;
  launch.geometry = gpu_kernel_geometry(f, *stage);
  SharedHoister hoister;
  StmtP code = hoister.mutate(stage);
  if (launch.geometry.has_thread_loops) code = FirstThreadStores(*code).mutate(code);
  StmtP body = with_context(context, code);
  for (size_t i = hoister.shared.size(); i-- > 0;) {
    auto a = std::make_shared<Stmt>(*hoister.shared[i]);
    a->body = body;
    body = a;
  }
  return make_kernel(name, std::move(launch), body);
}

StmtP grid_stride_kernel(const std::vector<StmtP>& context, const StmtP& stage, const std::string& name,
                         const GpuLowerOptions& options) {
  Launch launch;
  launch.kind = LaunchKind::GridStride;
  launch.geometry.block = {options.threads_per_block, 1, 1};
  launch.max_blocks = options.max_blocks;
  for (const Stmt* s = stage.get(); s->kind == StmtKind::For && s->for_kind == ForKind::GpuGridStride;
       s = s->body.get()) {
    launch.loops.push_back(s->name);
    launch.extents.push_back(s->extent);
  }
  return make_kernel(name, std::move(launch), with_context(context, stage));
}

}  // namespace

void outline_kernels(Func& f, const GpuLowerOptions& options) {
  if (!f.body) return;
  const GpuStages g = gpu_stages(f);
  std::vector<StmtP> kernels, sequential;
  auto next_name = [&] { return "ekb_kernel_" + std::to_string(kernels.size()); };
  auto flush_sequential = [&] {
    if (sequential.empty()) return;
    kernels.push_back(make_kernel(next_name(), Launch{}, with_context(g.context, make_block(sequential))));
    sequential.clear();
  };
  for (const StmtP& s : g.stages) {
    if (has_gpu_bound_loops(*s)) {
      flush_sequential();
      kernels.push_back(bound_kernel(f, g.context, s, next_name()));
    } else if (s->kind == StmtKind::For && s->for_kind == ForKind::GpuGridStride) {
      flush_sequential();
      kernels.push_back(grid_stride_kernel(g.context, s, next_name(), options));
    } else {
      sequential.push_back(s);
    }
  }
  flush_sequential();
  f.body = make_block(kernels);
}

}  // namespace ekb::lower
