#include "lower/schedule_bind.h"

#include <algorithm>
#include <functional>
#include <map>
#include <set>
#include <stdexcept>

#include "lir/mutator.h"
#include "lower/region.h"
#include "lower/schedule_loop_kinds.h"
#include "lower/schedule_loops.h"

namespace ekb::lower {

using namespace lir;

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
    geometry_.shared_bytes += reduction_bytes_per_thread_ * threads;
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
      // A cooperative reduction combines through one shared slot per thread and accumulator.
      for (const ThreadAccumulator& a : thread_accumulators(s)) reduction_bytes_per_thread_ += ir::byte_size(a.type);
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
        std::vector<ThreadAccumulator> accumulators = thread ? thread_accumulators(s) : std::vector<ThreadAccumulator>{};
        if (!accumulators.empty() && !divergence.empty())
          throw ScheduleError("the cooperative reduction over loop '" + s.name + "' (bound to " +
                                  axis_text(s.for_kind, s.gpu_axis) +
                                  ") is not reached by every thread of the block, and its combine waits for all "
                                  "of them: " + divergence,
                              kDivergenceHint);
        if (thread) {
          varying_.insert(s.name);
          int64_t n = *constant_extent(s);
          if (n < geometry_.block[s.gpu_axis] && divergence.empty())
            divergence = "loop '" + s.name + "' bound to " + axis_text(s.for_kind, s.gpu_axis) + " has " +
                         std::to_string(n) + " iterations but the block has " +
                         std::to_string(geometry_.block[s.gpu_axis]) + " threads along that axis";
        } else if (divergence.empty() && uses_any(*s.extent, varying_)) {
          // Only the trip count matters: a loop that starts at a different index in each thread
          // (a row per thread.y, placed there by compute_at) still runs its body, and whatever
          // barrier is in it, as many times in every thread.
          divergence = "the trip count of loop '" + s.name + "' differs between threads";
        }
        if (!thread && (uses_any(*s.min, varying_) || uses_any(*s.extent, varying_))) varying_.insert(s.name);
        second_pass(*s.body, in_thread || thread, divergence);
        // Combined over the block's threads: every thread holds the same total after the loop.
        for (const ThreadAccumulator& a : accumulators) varying_.erase(a.var);
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
        // The same value at the same place in every thread (a cooperative reduction's result):
        // the emitters let the block's first thread store it.
        if (geometry_.has_thread_loops && !in_thread && !private_.count(s.name) && !is_uniform_store(s))
          throw ScheduleError("'" + s.name +
                                  "' is stored outside the loops bound to threads, so every thread of the "
                                  "block would store it",
                              "bind the loops around the store to threads (or "
                              "cache it in local registers inside them)");
        return;
      case StmtKind::Assign:
        if (uses_any(*s.value, varying_) || has_load(*s.value)) varying_.insert(s.name);
        return;
      case StmtKind::Prefetch:  // not in a scheduled stage: the passes after the schedule make them
      case StmtKind::Kernel:
      case StmtKind::ThreadAllReduce:
        return;
    }
  }

  bool is_uniform_store(const Stmt& store) const {
    if (uses_any(*store.value, varying_) || has_load(*store.value)) return false;
    for (const ExprP& i : store.indices)
      if (uses_any(*i, varying_) || has_load(*i)) return false;
    return true;
  }

  static std::string copy_target(const Stmt& coop) {
    std::string name;
    for_each_stmt(coop, [&](const Stmt& x) {
      if (x.kind == StmtKind::Store) name = x.name;
    });
    return name;
  }

  KernelGeometry geometry_;
  int64_t reduction_bytes_per_thread_ = 0;
  std::set<std::string> shared_, private_, outside_threads_, varying_;
};

// bind of reduction loop l to a thread axis: a cooperative reduction (see the header).
void bind_reduction(Func& f, const StageLoop& l, const std::string& target, int axis) {
  for (const std::string& v : l.vars) {
    const Stmt* loop = find_loop(*f.body, v);
    if (!loop) continue;
    if (thread_accumulators(*loop).empty())
      throw ScheduleError("reduction loop '" + l.name + "' accumulates in memory, not in a scalar accumulator, so its "
                              "threads would update the same elements at once",
                          "bind the reduction before a reorder moves it out of its statement, or rfactor it");
    std::set<std::string> own = allocated_under(*loop->body);
    for_each_stmt(*loop->body, [&](const Stmt& x) {
      if (x.kind == StmtKind::Store && !own.count(x.name))
        throw ScheduleError("reduction loop '" + l.name + "' stores to '" + x.name +
                                "' in its iterations, which the threads would do at once",
                            "rfactor it, or cache what it writes inside the loop");
    });
  }
  f.body = rewrite_loops(f.body, l.vars, [&](const Stmt& s) {
    if (s.for_kind != ForKind::Serial)
      throw ScheduleError("loop '" + l.name + "' is already " + std::string(for_kind_name(s.for_kind)) +
                          (is_bound(s) ? "." + std::string(1, "xyz"[s.gpu_axis]) : ""));
    auto n = std::make_shared<Stmt>(s);
    n->for_kind = ForKind::GpuThread;
    n->gpu_axis = axis;
    return StmtP(n);
  });
  (void)target;
}

}  // namespace

std::vector<ThreadAccumulator> thread_accumulators(const Stmt& loop) {
  // Variables declared inside the loop are each iteration's own.
  std::set<std::string> inner;
  for_each_stmt(*loop.body, [&](const Stmt& x) {
    if (x.kind == StmtKind::DeclareVar || x.kind == StmtKind::LetStmt) inner.insert(x.name);
  });
  std::vector<ThreadAccumulator> found;
  std::map<std::string, int> updates;
  for_each_stmt(*loop.body, [&](const Stmt& x) {
    if (x.kind != StmtKind::Assign || inner.count(x.name)) return;
    const Expr& v = *x.value;
    auto is_acc = [&](const ExprP& e) { return e->kind == ExprKind::Var && e->name == x.name; };
    bool combinable = v.kind == ExprKind::Binary &&
                      (v.bin_op == BinOp::Add || v.bin_op == BinOp::Mul || v.bin_op == BinOp::Min ||
                       v.bin_op == BinOp::Max) &&
                      ((is_acc(v.args[0]) && !uses_var(*v.args[1], x.name)) ||
                       (is_acc(v.args[1]) && !uses_var(*v.args[0], x.name)));
    auto same = std::find_if(found.begin(), found.end(), [&](const ThreadAccumulator& a) { return a.var == x.name; });
    if (!combinable || (same != found.end() && same->op != v.bin_op))
      throw ScheduleError("the iterations of loop '" + loop.name + "' update '" + x.name + "' as '" + to_string(v) +
                              "', which is not a sum, product, min or max of the iterations: threads cannot "
                              "combine their parts of it in a tree",
                          "argmax/argmin keep an index beside the value: rfactor them and finish in a second kernel");
    if (same == found.end()) found.push_back({x.name, v.type, v.bin_op});
    ++updates[x.name];
  });
  // The accumulator's only uses are its updates: a read in between would see one thread's part.
  for (const ThreadAccumulator& a : found) {
    int uses = 0;
    for_each_expr(*loop.body, [&](const Expr& e) { uses += e.kind == ExprKind::Var && e.name == a.var; });
    if (uses != updates[a.var])
      throw ScheduleError("loop '" + loop.name + "' reads its accumulator '" + a.var +
                          "' besides updating it: a thread sees only its own part of the reduction there");
  }
  return found;
}

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
  if (l.role == LoopRole::Reduction && kind == ForKind::GpuBlock)
    throw ScheduleError("cannot bind reduction loop '" + loop + "' to " + target +
                            ": the blocks of a grid cannot wait for each other to combine their partial results",
                        "bind it to thread.x|y|z (a cooperative reduction in each block), or rfactor it and bind "
                        "the partial results' loop to blocks");
  if (l.role == LoopRole::Reduction) return bind_reduction(f, l, target, axis);
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

}  // namespace ekb::lower
