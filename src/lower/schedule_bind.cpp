#include "lower/schedule_bind.h"

#include <functional>
#include <set>

#include "lower/mutator.h"
#include "lower/region.h"
#include "lower/schedule_loop_kinds.h"
#include "lower/schedule_loops.h"

namespace ekb::lir {

namespace {

std::string axis_text(ForKind kind, int axis) {
  return std::string(kind == ForKind::GpuBlock ? "block." : "thread.") + "xyz"[axis];
}

bool is_bound(const Stmt& s) {
  return s.kind == StmtKind::For && (s.for_kind == ForKind::GpuBlock || s.for_kind == ForKind::GpuThread);
}

bool uses_any(const Expr& e, const std::set<std::string>& vars) {
  bool found = false;
  for_each_expr(e, [&](const Expr& x) { found |= x.kind == ExprKind::Var && vars.count(x.name); });
  return found;
}

int64_t constant_bound(const Stmt& loop, const std::string& what) {
  auto n = constant_extent(loop);
  if (!n)
    throw ScheduleError("the extent of loop '" + loop.name + "', bound to " + axis_text(loop.for_kind, loop.gpu_axis) +
                            ", is not a constant: the launch geometry must be known before the launch",
                        "split the loop by a constant factor and bind the inner part to " + what);
  return *n;
}

const char* const kDivergenceHint =
    "split the bound loops with tail=shift_inwards (edge tiles shifted, no guard), cache at a loop outside the "
    "divergent code, or bind loops whose extents fill the block";

// Walks one scheduled stage: the grid from its leading block loops, the block from its thread
// loops, then (knowing the block size) the checks that need it.
class KernelChecker {
 public:
  KernelGeometry run(const Stmt& stage) {
    // The leading chain: lets and block loops, one per axis.
    const Stmt* s = &stage;
    std::set<int> block_axes;
    while (s->kind == StmtKind::LetStmt || (s->kind == StmtKind::For && s->for_kind == ForKind::GpuBlock)) {
      if (s->kind == StmtKind::For) {
        if (!block_axes.insert(s->gpu_axis).second)
          throw ScheduleError("two loops of one stage are bound to " + axis_text(ForKind::GpuBlock, s->gpu_axis) +
                              " (the second is '" + s->name + "')");
        int64_t n = constant_bound(*s, "block." + std::string(1, "xyz"[s->gpu_axis]));
        if (n > kMaxGridDim[s->gpu_axis])
          throw ScheduleError("loop '" + s->name + "' bound to " + axis_text(s->for_kind, s->gpu_axis) + " has " +
                                  std::to_string(n) + " iterations, more than the grid allows along that axis (" +
                                  std::to_string(kMaxGridDim[s->gpu_axis]) + ")",
                              "bind the largest loop to block.x, or split it over two axes");
        geometry_.grid[s->gpu_axis] = std::max<int64_t>(n, 0);  // 0: nothing to launch
      }
      s = s->body.get();
    }
    first_pass(*s, {});
    int64_t threads = geometry_.threads();
    if (threads > kMaxThreadsPerBlock)
      throw ScheduleError("the loops bound to threads make blocks of " + std::to_string(geometry_.block[0]) + " x " +
                              std::to_string(geometry_.block[1]) + " x " + std::to_string(geometry_.block[2]) + " = " +
                              std::to_string(threads) + " threads, more than a block may have (" +
                              std::to_string(kMaxThreadsPerBlock) + ")",
                          "split the thread loops by smaller factors");
    if (geometry_.shared_bytes > kMaxSharedBytes)
      throw ScheduleError("the shared caches of one block take " + std::to_string(geometry_.shared_bytes) +
                              " bytes, more than a block's shared memory (" + std::to_string(kMaxSharedBytes) + ")",
                          "cache smaller tiles (at an inner loop, or with smaller split factors)");
    second_pass(*s, /*in_thread=*/false, /*divergence=*/"");
    return geometry_;
  }

 private:
  // Block sizes and shared memory; the nesting of bound loops.
  void first_pass(const Stmt& s, std::set<int> thread_axes) {
    if (s.kind == StmtKind::For && s.for_kind == ForKind::GpuBlock)
      throw ScheduleError("loop '" + s.name + "' is bound to " + axis_text(s.for_kind, s.gpu_axis) +
                              " but is not among the outermost loops of its stage",
                          "reorder the loops bound to blocks outermost");
    if (s.kind == StmtKind::For && s.for_kind == ForKind::GpuThread) {
      if (!thread_axes.insert(s.gpu_axis).second)
        throw ScheduleError("loop '" + s.name + "' is bound to " + axis_text(s.for_kind, s.gpu_axis) +
                            " inside another loop bound to the same axis");
      int64_t n = constant_bound(s, "thread." + std::string(1, "xyz"[s.gpu_axis]));
      if (n > kMaxBlockDim[s.gpu_axis])
        throw ScheduleError("loop '" + s.name + "' bound to " + axis_text(s.for_kind, s.gpu_axis) + " has " +
                                std::to_string(n) + " iterations, more than a block's size along that axis (" +
                                std::to_string(kMaxBlockDim[s.gpu_axis]) + ")",
                            "split it and bind the inner part");
      geometry_.block[s.gpu_axis] = std::max(geometry_.block[s.gpu_axis], n);
      geometry_.has_thread_loops = true;
    }
    if (s.kind == StmtKind::Allocate) {
      if (s.scope == MemoryScope::Shared) {
        geometry_.shared_bytes += s.extent->int_value * ir::byte_size(s.type);
        shared_.insert(s.name);
      } else {
        private_.insert(s.name);  // inside the kernel: each thread has its own
        if (thread_axes.empty()) outside_threads_.insert(s.name);
      }
    }
    for (const StmtP& c : {s.body, s.else_body})
      if (c) first_pass(*c, thread_axes);
    for (const StmtP& c : s.stmts) first_pass(*c, thread_axes);
  }

  // Stores that every thread would repeat, and barriers some threads would not reach. `divergence`
  // says why threads may take different paths here ("" when they all do the same).
  void second_pass(const Stmt& s, bool in_thread, std::string divergence) {
    switch (s.kind) {
      case StmtKind::For: {
        if (s.for_kind == ForKind::GpuCooperative) {
          if (!divergence.empty())
            throw ScheduleError("the cooperative copy into shared '" + copy_target(s) +
                                    "' (cache_read) is not reached by every thread of the block: " + divergence,
                                kDivergenceHint);
          return;  // its stores are spread over the threads, each element once
        }
        bool thread = s.for_kind == ForKind::GpuThread;
        if (thread) {
          varying_.insert(s.name);
          int64_t n = *constant_extent(s);
          if (n < geometry_.block[s.gpu_axis] && divergence.empty())
            divergence = "loop '" + s.name + "' bound to " + axis_text(s.for_kind, s.gpu_axis) + " has " +
                         std::to_string(n) + " iterations but the block has " +
                         std::to_string(geometry_.block[s.gpu_axis]) + " threads along that axis";
        } else if (divergence.empty() && (uses_any(*s.min, varying_) || uses_any(*s.extent, varying_))) {
          divergence = "the bounds of loop '" + s.name + "' differ between threads";
        }
        if (!thread && (uses_any(*s.min, varying_) || uses_any(*s.extent, varying_))) varying_.insert(s.name);
        second_pass(*s.body, in_thread || thread, divergence);
        return;
      }
      case StmtKind::LetStmt:
      case StmtKind::DeclareVar:
        if (uses_any(*s.value, varying_) || has_load(*s.value)) varying_.insert(s.name);
        second_pass(*s.body, in_thread, divergence);
        return;
      case StmtKind::IfThenElse:
        if (divergence.empty() && (uses_any(*s.value, varying_) || has_load(*s.value)))
          divergence = "it is under the condition '" + to_string(*s.value) + "', which may differ between threads";
        second_pass(*s.body, in_thread, divergence);
        if (s.else_body) second_pass(*s.else_body, in_thread, divergence);
        return;
      case StmtKind::Block:
        for (const StmtP& c : s.stmts) second_pass(*c, in_thread, divergence);
        return;
      case StmtKind::Allocate:
        second_pass(*s.body, in_thread, divergence);
        return;
      case StmtKind::Barrier:
        if (!divergence.empty())
          throw ScheduleError("a barrier of a shared cache is not reached by every thread of the block: " + divergence,
                              kDivergenceHint);
        return;
      case StmtKind::Store:
        if (shared_.count(s.name))
          throw ScheduleError("shared '" + s.name + "' is written outside its cooperative copy");
        // Each thread has its own copy of a buffer allocated outside the thread loops: what one
        // thread stores there inside them, the others would never see.
        if (in_thread && outside_threads_.count(s.name))
          throw ScheduleError("'" + s.name +
                                  "' is allocated outside the loops bound to threads (one copy per thread) "
                                  "but written inside them, where each thread writes only its part",
                              "place it at a loop inside the thread loops (compute_at, "
                              "cache_write), or cache it in shared memory");
        if (geometry_.has_thread_loops && !in_thread && !private_.count(s.name))
          throw ScheduleError("'" + s.name +
                                  "' is stored outside the loops bound to threads, so every thread of the "
                                  "block would store it",
                              "bind the loops around the store to threads (or "
                              "cache it in local registers inside them)");
        return;
      case StmtKind::Assign:
        return;
    }
  }

  static std::string copy_target(const Stmt& coop) {
    std::string name;
    for_each_stmt(coop, [&](const Stmt& x) {
      if (x.kind == StmtKind::Store) name = x.name;
    });
    return name;
  }

  KernelGeometry geometry_;
  std::set<std::string> shared_, private_, outside_threads_, varying_;
};

}  // namespace

void bind_loop(Func& f, const std::string& stage, const std::string& loop, const std::string& target) {
  ForKind kind;
  if (target.rfind("block.", 0) == 0)
    kind = ForKind::GpuBlock;
  else if (target.rfind("thread.", 0) == 0)
    kind = ForKind::GpuThread;
  else
    throw ScheduleError("unknown bind target '" + target + "'", "the targets are block.x|y|z and thread.x|y|z");
  char axis_letter = target.back();
  if (axis_letter < 'x' || axis_letter > 'z' || target.size() != (kind == ForKind::GpuBlock ? 7u : 8u))
    throw ScheduleError("unknown bind target '" + target + "'", "the targets are block.x|y|z and thread.x|y|z");
  int axis = axis_letter - 'x';

  Stage& st = stage_named(f, stage);
  StageLoop& l = loop_named(st, loop);
  std::string why = concurrency_problem(f, st, l);
  if (!why.empty())
    throw ScheduleError(
        "cannot bind loop '" + loop + "' to " + target + ": " + why,
        l.role == LoopRole::Reduction ? "rfactor the reduction and bind the partial results' loop" : "");
  f.body = rewrite_loops(f.body, l.vars, [&](const Stmt& s) {
    if (s.for_kind != ForKind::Serial)
      throw ScheduleError("loop '" + loop + "' is already " + std::string(for_kind_name(s.for_kind)) +
                          (is_bound(s) ? "." + std::string(1, "xyz"[s.gpu_axis]) : ""));
    auto n = std::make_shared<Stmt>(s);
    n->for_kind = kind;
    n->gpu_axis = axis;
    return StmtP(n);
  });
}

bool has_gpu_bound_loops(const Stmt& s) {
  bool found = false;
  for_each_stmt(s, [&](const Stmt& x) {
    found |= is_bound(x) || (x.kind == StmtKind::For && x.for_kind == ForKind::GpuCooperative);
  });
  return found;
}

KernelGeometry gpu_kernel_geometry(const Func& f, const Stmt& stage) { return KernelChecker().run(stage); }

void finish_gpu_schedule(Func& f) {
  // Temps allocated between top-level stages (rfactor's partial results) move to the root, so that
  // every stage is a top-level statement, a kernel of its own; names are unique, so nothing else
  // changes.
  TopLevel t = top_level(f);
  std::vector<StmtP> stmts;
  std::function<void(const StmtP&)> add = [&](const StmtP& s) {
    if (s->kind == StmtKind::Allocate && s->scope == MemoryScope::Global) {
      t.allocations.push_back(s);
      add(s->body);
    } else if (s->kind == StmtKind::Block) {
      for (const StmtP& c : s->stmts) add(c);
    } else {
      stmts.push_back(s);
    }
  };
  for (const StmtP& s : t.stmts) add(s);
  t.stmts = std::move(stmts);
  f.body = t.build();
  for (const StmtP& s : t.stmts)
    if (has_gpu_bound_loops(*s)) gpu_kernel_geometry(f, *s);
}

std::vector<const Stmt*> enclosing_loops(const Stmt& root, const std::string& var) {
  std::vector<const Stmt*> path, found;
  std::function<bool(const Stmt&)> walk = [&](const Stmt& s) {
    if (s.kind == StmtKind::For && s.name == var) {
      found = path;
      return true;
    }
    if (s.kind == StmtKind::For) path.push_back(&s);
    bool done = false;
    for (const StmtP& c : {s.body, s.else_body})
      if (!done && c) done = walk(*c);
    for (const StmtP& c : s.stmts)
      if (!done) done = walk(*c);
    if (s.kind == StmtKind::For) path.pop_back();
    return done;
  };
  walk(root);
  return found;
}

}  // namespace ekb::lir
