#include "lower/memory_cache.h"

#include <algorithm>
#include <map>
#include <set>

#include "lir/mutator.h"
#include "lower/region.h"
#include "lower/schedule_bind.h"
#include "lower/schedule_loops.h"

namespace ekb::lower {

using namespace lir;

namespace {

MemoryScope memory_scope(const std::string& scope, bool gpu) {
  if (scope == "local") return MemoryScope::Local;
  if (scope == "tile" || scope == "global") return MemoryScope::Global;
  if (scope == "shared") {
    if (gpu) return MemoryScope::Shared;
    throw ScheduleError("scope 'shared' is GPU shared memory, which cpu does not have",
                        "on cpu use tile (a buffer that stays in cache) or local (registers)");
  }
  throw ScheduleError("unknown memory scope '" + scope + "'", "the scopes are global, shared, local and tile");
}

// What the threads of a block read under `loop`, for a shared cache: its body inside the loops
// bound to threads around it (and itself, when bound), so that their variables range over the
// whole block instead of naming one thread's part.
StmtP block_wide_scope(const Func& f, const Stmt& loop) {
  std::vector<const Stmt*> outer = enclosing_loops(*f.body, loop.name);
  bool in_block = std::any_of(outer.begin(), outer.end(), [](const Stmt* l) { return l->for_kind == ForKind::GpuBlock; });
  if (!in_block && loop.for_kind != ForKind::GpuBlock)
    throw ScheduleError("shared memory belongs to a block of threads, and loop '" + loop.name +
                            "' is not inside a loop bound to block.x|y|z",
                        "bind an enclosing loop to blocks first (bind before cache_read)");
  StmtP s = loop.for_kind == ForKind::GpuThread ? with_body(loop, loop.body) : loop.body;
  for (auto it = outer.rbegin(); it != outer.rend(); ++it)
    if ((*it)->for_kind == ForKind::GpuThread) s = with_body(**it, s);
  return s;
}

// The variables that differ between the threads of a block at `loop`: those of the thread loops
// around it and of every loop inside those (a box using them is not one box for the block).
std::set<std::string> thread_varying(const Func& f, const Stmt& loop) {
  std::set<std::string> vars;
  bool inside_thread = false;
  for (const Stmt* l : enclosing_loops(*f.body, loop.name)) {
    inside_thread |= l->for_kind == ForKind::GpuThread;
    if (inside_thread) vars.insert(l->name);
  }
  if (loop.for_kind == ForKind::GpuThread) vars.insert(loop.name);
  return vars;
}

// The copy nest's loops spread over the block's threads.
StmtP cooperative(const StmtP& nest) {
  if (nest->kind != StmtKind::For) return nest;
  auto n = std::make_shared<Stmt>(*nest);
  n->for_kind = ForKind::GpuCooperative;
  n->body = cooperative(nest->body);
  return n;
}

// A copy nest over the box for a cache in registers: loops of the box's constant size, unrolled,
// each guarded by the box's actual extent, so that every index into the cache is a constant once
// unrolled (a register array indexed by a variable lives in memory instead).
StmtP register_nest(Func& f, const Box& box, const std::string& base,
                    const std::function<StmtP(const std::vector<ExprP>&)>& body) {
  std::vector<std::string> vars;
  std::vector<ExprP> indices;
  std::vector<ExprP> inside;
  for (size_t d = 0; d < box.min.size(); ++d) {
    vars.push_back(f.fresh_name(base + std::to_string(d)));
    ExprP v = var(vars.back(), ScalarType::Index);
    indices.push_back(binary(BinOp::Add, box.min[d], v));
    inside.push_back(binary(BinOp::Lt, v, box.extent[d]));
  }
  StmtP s = make_if(conjunction(inside), body(indices));
  for (size_t d = box.min.size(); d-- > 0;)
    s = make_for(vars[d], index_imm(0), index_imm(box.size[d]), s, ForKind::Unrolled);
  return s;
}

// `body` preceded by a cooperative `copy` and a barrier (the copy is complete before any thread
// reads it), followed by a barrier (every thread is done reading before the next iteration's copy
// overwrites it). A second shared cache at the same loop joins the first one's copy phase.
StmtP with_cooperative_copy(const StmtP& body, const StmtP& copy) {
  if (body->kind == StmtKind::LetStmt || (body->kind == StmtKind::Allocate && body->scope == MemoryScope::Shared)) {
    auto n = std::make_shared<Stmt>(*body);
    n->body = with_cooperative_copy(body->body, copy);
    return n;
  }
  if (body->kind == StmtKind::Block && !body->stmts.empty() && body->stmts[0]->kind == StmtKind::For &&
      body->stmts[0]->for_kind == ForKind::GpuCooperative) {
    std::vector<StmtP> parts = body->stmts;
    auto barrier = std::find_if(parts.begin(), parts.end(), [](const StmtP& x) { return x->kind == StmtKind::Barrier; });
    parts.insert(barrier, copy);
    return make_block(std::move(parts));
  }
  return make_block({copy, make_barrier(), body, make_barrier()});
}

// Where a cache goes: the copies of the loop that exist, the box each one's body touches, and the
// cache's shape (the largest box), checked against what its scope can hold.
struct CacheSite {
  std::vector<std::string> copies;
  std::vector<int64_t> shape;
};

// The scope whose accesses a cache holds: the loop's body, or for a shared cache the whole block's.
StmtP cached_scope(const Func& f, const Stmt& loop, MemoryScope scope) {
  return scope == MemoryScope::Shared ? block_wide_scope(f, loop) : loop.body;
}

CacheSite cache_site(Func& f, const StageLoop& l, const std::string& buffer, AccessKind kind, MemoryScope scope,
                     const std::string& cache, bool gpu) {
  if (f.names.count(cache)) throw ScheduleError("'" + cache + "' is already a name in the kernel", "choose a new name");
  CacheSite site;
  const Buffer& b = *f.buffer(buffer);
  site.shape.assign(b.shape.size(), 1);
  for (const Stmt* loop : loops_of(*f.body, l.vars)) {
    auto box = footprint(f, *cached_scope(f, *loop, scope), buffer, kind);
    if (!box) continue;
    if (scope == MemoryScope::Shared) {
      std::set<std::string> varying = thread_varying(f, *loop);
      for (const ExprP& e : box->min)
        for_each_expr(*e, [&](const Expr& x) {
          if (x.kind == ExprKind::Var && varying.count(x.name))
            throw ScheduleError("the box of '" + buffer + "' read under loop '" + l.name + "' depends on '" + x.name +
                                "', which differs between the threads of a block",
                                "cache at a loop whose body all threads of the block share");
        });
    }
    for (size_t d = 0; d < site.shape.size(); ++d) site.shape[d] = std::max(site.shape[d], box->size[d]);
    if (std::find(site.copies.begin(), site.copies.end(), loop->name) == site.copies.end())
      site.copies.push_back(loop->name);
  }
  if (site.copies.empty())
    throw ScheduleError("nothing inside loop '" + l.name + "' " + (kind == AccessKind::Loads ? "reads" : "writes") +
                        " '" + buffer + "'");
  int64_t bytes = ir::byte_size(b.type);
  for (int64_t n : site.shape) bytes *= n;
  const int64_t max_registers = gpu ? kMaxGpuRegisterBytes : kMaxRegisterBytes;
  if (scope == MemoryScope::Local && bytes > max_registers)
    throw ScheduleError("the box under loop '" + l.name + "' takes " + std::to_string(bytes) +
                            " bytes, more than registers hold (" + std::to_string(max_registers) + ")",
                        gpu ? "cache at an inner loop, or use scope shared" : "cache at an inner loop, or use scope tile");
  if (scope == MemoryScope::Shared && bytes > kMaxSharedBytes)
    throw ScheduleError("the box under loop '" + l.name + "' takes " + std::to_string(bytes) +
                            " bytes, more than a block's shared memory (" + std::to_string(kMaxSharedBytes) + ")",
                        "cache at an inner loop");
  for (const std::string& v : site.copies)
    if (scope != MemoryScope::Shared && in_parallel_loop(*f.body, v) && bytes > kMaxPrivateBytes)
      throw ScheduleError("the box under loop '" + l.name + "' takes " + std::to_string(bytes) +
                              " bytes, too many for a per-thread buffer in a parallel loop",
                          "cache at an inner loop");
  f.names.insert(cache);
  f.buffers.push_back({cache, b.type, site.shape, BufferRole::Temp});
  return site;
}

// The copy loops of a cache, recorded as a stage of its own (loops c0, c1, ...) so that later
// directives and the GPU binders can schedule them.
void record_copy_stage(Func& f, const std::string& name, const StmtP& nest) {
  Stage* s = f.stage(name);
  if (!s) {
    f.stages.push_back({name, name, false, {}, {}});
    s = &f.stages.back();
  }
  LoopChain chain = loop_chain(nest);
  for (size_t d = 0; d < chain.loops.size(); ++d) {
    std::string loop_name = "c" + std::to_string(d);
    if (StageLoop* l = s->loop(loop_name)) l->vars.push_back(chain.loops[d]->name);
    else s->loops.push_back({loop_name, LoopRole::Pure, {chain.loops[d]->name}});
  }
}

// Whether the body's first access to `tensor` stores the whole box without reading it (an
// initialization): then the cache need not be loaded first. Conditions around its stores must be
// the `x < n` guards of split loops, which only keep indices inside the tensor.
bool starts_by_overwriting(const Func& f, const Stmt& body, const std::string& tensor, const Box& box) {
  std::vector<StmtP> parts = body.kind == StmtKind::Block ? body.stmts : std::vector<StmtP>{};
  const Stmt* first = parts.empty() ? &body : nullptr;
  for (const StmtP& s : parts)
    if (!first && count_accesses(*s, tensor, AccessKind::Both) > 0) first = s.get();
  if (!first || count_accesses(*first, tensor, AccessKind::Loads) > 0) return false;
  bool guards_only = true;
  for_each_stmt(*first, [&](const Stmt& s) {
    if (s.kind != StmtKind::IfThenElse) return;
    bool split_guard = !s.else_body;
    for_each_expr(*s.value, [&](const Expr& e) {
      if (e.kind == ExprKind::Binary && e.bin_op != BinOp::And && e.type == ScalarType::Bool)
        split_guard &= e.bin_op == BinOp::Lt && e.args[1]->kind == ExprKind::IntImm;
    });
    guards_only &= split_guard;
  });
  auto written = footprint(f, *first, tensor, AccessKind::Stores);
  return guards_only && written && same_box(*written, box) && stores_cover_box(*first, tensor);
}

}  // namespace

void cache_read(Func& f, const std::string& tensor, const std::string& consumer, const std::string& loop_name,
                const std::string& scope, const std::string& cache, bool gpu) {
  MemoryScope where = memory_scope(scope, gpu);
  Stage& c = stage_named(f, consumer);
  const StageLoop& l = loop_named(c, loop_name);
  // An input that layout packed is read from its packed copy.
  auto packed = f.packed_inputs.find(tensor);
  std::string source = packed != f.packed_inputs.end() ? packed->second : tensor;
  if (!f.buffer(source)) throw ScheduleError("there is no tensor '" + tensor + "'");
  for (const Stmt* loop : loops_of(*f.body, l.vars))
    if (count_accesses(*loop->body, source, AccessKind::Stores) > 0)
      throw ScheduleError("'" + tensor + "' is written inside loop '" + loop_name + "', so a copy read there would go stale",
                          "cache_write caches what a loop writes");
  f.body = rewrite_loops(f.body, l.vars, [&](const Stmt& loop) {
    return with_body(loop, lower_boundary_reads(f, loop.body, source));
  });
  CacheSite site = cache_site(f, l, source, AccessKind::Loads, where, cache, gpu);
  const Buffer& b = *f.buffer(cache);
  f.body = rewrite_loops(f.body, site.copies, [&](const Stmt& loop) {
    auto box = footprint(f, *cached_scope(f, loop, where), source, AccessKind::Loads);
    if (!box) return with_body(loop, loop.body);
    return with_body(loop, bind_box(f, *box, cache, [&] {
                       IndexMap in_box = relative_to(box->min);
                       auto copy_element = [&](const std::vector<ExprP>& i) {
                         return make_store(cache, in_box(i), load(source, b.type, i));
                       };
                       StmtP copy = where == MemoryScope::Local ? register_nest(f, *box, cache + "_c", copy_element)
                                                               : nest_over(f, box->min, box->extent, cache + "_c", copy_element);
                       StmtP body = redirect_accesses(loop.body, source, cache, in_box);
                       if (where == MemoryScope::Shared) {
                         copy = cooperative(copy);
                         body = with_cooperative_copy(body, copy);
                       } else {
                         body = make_block({copy, body});
                       }
                       record_copy_stage(f, cache, copy);
                       return make_allocate(cache, b.type, b.num_elements(), where, body);
                     }));
  });
}

void cache_write(Func& f, const std::string& stage, const std::string& loop_name, const std::string& scope,
                 const std::string& cache, bool gpu) {
  MemoryScope where = memory_scope(scope, gpu);
  if (where == MemoryScope::Shared)
    throw ScheduleError("cache_write into shared memory is not supported: the threads of a block would have to "
                        "agree on who writes each element back",
                        "accumulate in local (registers) inside the loops bound to threads");
  Stage& c = stage_named(f, stage);
  const StageLoop& l = loop_named(c, loop_name);
  const std::string tensor = c.tensor;
  f.body = rewrite_loops(f.body, l.vars, [&](const Stmt& loop) {
    return with_body(loop, lower_boundary_reads(f, loop.body, tensor));
  });
  for (const Stmt* loop : loops_of(*f.body, l.vars))
    if (count_accesses(*loop->body, tensor, AccessKind::Stores) == 0)
      throw ScheduleError("'" + stage + "' does not write '" + tensor + "' inside loop '" + loop_name + "'");
  CacheSite site = cache_site(f, l, tensor, AccessKind::Both, where, cache, gpu);
  const Buffer& b = *f.buffer(cache);
  f.body = rewrite_loops(f.body, site.copies, [&](const Stmt& loop) {
    auto written = footprint(f, *loop.body, tensor, AccessKind::Both);
    if (!written) return with_body(loop, loop.body);
    Box box = *written;
    bool load_first = !starts_by_overwriting(f, *loop.body, tensor, box);
    return with_body(loop, bind_box(f, box, cache, [&] {
                       IndexMap in_box = relative_to(box.min);
                       std::vector<StmtP> steps;
                       auto nest = [&](const std::string& base, const std::function<StmtP(const std::vector<ExprP>&)>& element) {
                         return where == MemoryScope::Local ? register_nest(f, box, base, element)
                                                            : nest_over(f, box.min, box.extent, base, element);
                       };
                       if (load_first) {
                         StmtP in = nest(cache + "_in", [&](const std::vector<ExprP>& i) {
                           return make_store(cache, in_box(i), load(tensor, b.type, i));
                         });
                         record_copy_stage(f, cache, in);  // the loads are copies of the same loops
                         steps.push_back(in);
                       }
                       steps.push_back(redirect_accesses(loop.body, tensor, cache, in_box));
                       StmtP back = nest(cache + "_c", [&](const std::vector<ExprP>& i) {
                         return make_store(tensor, i, load(cache, b.type, in_box(i)));
                       });
                       record_copy_stage(f, cache, back);
                       steps.push_back(back);
                       return make_allocate(cache, b.type, b.num_elements(), where, make_block(std::move(steps)));
                     }));
  });
}

}  // namespace ekb::lower
