#include "lower/memory_cache.h"

#include <algorithm>
#include <map>

#include "lower/mutator.h"
#include "lower/region.h"
#include "lower/schedule_loops.h"

namespace ekb::lir {

namespace {

MemoryScope cpu_scope(const std::string& scope) {
  if (scope == "local") return MemoryScope::Local;
  if (scope == "tile" || scope == "global") return MemoryScope::Global;
  if (scope == "shared")
    throw ScheduleError("scope 'shared' is GPU shared memory, which cpu does not have",
                        "on cpu use tile (a buffer that stays in cache) or local (registers)");
  throw ScheduleError("unknown memory scope '" + scope + "'", "the scopes are global, shared, local and tile");
}

// Where a cache goes: the copies of the loop that exist, the box each one's body touches, and the
// cache's shape (the largest box), checked against what its scope can hold.
struct CacheSite {
  std::vector<std::string> copies;
  std::vector<int64_t> shape;
};

CacheSite cache_site(Func& f, const StageLoop& l, const std::string& buffer, AccessKind kind, MemoryScope scope,
                     const std::string& cache) {
  if (f.names.count(cache)) throw ScheduleError("'" + cache + "' is already a name in the kernel", "choose a new name");
  CacheSite site;
  const Buffer& b = *f.buffer(buffer);
  site.shape.assign(b.shape.size(), 1);
  for (const Stmt* loop : loops_of(*f.body, l.vars)) {
    auto box = footprint(f, *loop->body, buffer, kind);
    if (!box) continue;
    for (size_t d = 0; d < site.shape.size(); ++d) site.shape[d] = std::max(site.shape[d], box->size[d]);
    if (std::find(site.copies.begin(), site.copies.end(), loop->name) == site.copies.end())
      site.copies.push_back(loop->name);
  }
  if (site.copies.empty())
    throw ScheduleError("nothing inside loop '" + l.name + "' " + (kind == AccessKind::Loads ? "reads" : "writes") +
                        " '" + buffer + "'");
  int64_t bytes = ir::byte_size(b.type);
  for (int64_t n : site.shape) bytes *= n;
  if (scope == MemoryScope::Local && bytes > kMaxRegisterBytes)
    throw ScheduleError("the box under loop '" + l.name + "' takes " + std::to_string(bytes) +
                            " bytes, more than registers hold (" + std::to_string(kMaxRegisterBytes) + ")",
                        "cache at an inner loop, or use scope tile");
  for (const std::string& v : site.copies)
    if (in_parallel_loop(*f.body, v) && bytes > kMaxPrivateBytes)
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
  return guards_only && written && same_box(*written, box);
}

}  // namespace

void cache_read(Func& f, const std::string& tensor, const std::string& consumer, const std::string& loop_name,
                const std::string& scope, const std::string& cache) {
  MemoryScope where = cpu_scope(scope);
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
  CacheSite site = cache_site(f, l, source, AccessKind::Loads, where, cache);
  const Buffer& b = *f.buffer(cache);
  f.body = rewrite_loops(f.body, site.copies, [&](const Stmt& loop) {
    auto box = footprint(f, *loop.body, source, AccessKind::Loads);
    if (!box) return with_body(loop, loop.body);
    return with_body(loop, bind_box(f, *box, cache, [&] {
                       IndexMap in_box = relative_to(box->min);
                       StmtP copy = nest_over(f, box->min, box->extent, cache + "_c", [&](const std::vector<ExprP>& i) {
                         return make_store(cache, in_box(i), load(source, b.type, i));
                       });
                       record_copy_stage(f, cache, copy);
                       return make_allocate(cache, b.type, b.num_elements(), where,
                                            make_block({copy, redirect_accesses(loop.body, source, cache, in_box)}));
                     }));
  });
}

void cache_write(Func& f, const std::string& stage, const std::string& loop_name, const std::string& scope,
                 const std::string& cache) {
  MemoryScope where = cpu_scope(scope);
  Stage& c = stage_named(f, stage);
  const StageLoop& l = loop_named(c, loop_name);
  const std::string tensor = c.tensor;
  f.body = rewrite_loops(f.body, l.vars, [&](const Stmt& loop) {
    return with_body(loop, lower_boundary_reads(f, loop.body, tensor));
  });
  for (const Stmt* loop : loops_of(*f.body, l.vars))
    if (count_accesses(*loop->body, tensor, AccessKind::Stores) == 0)
      throw ScheduleError("'" + stage + "' does not write '" + tensor + "' inside loop '" + loop_name + "'");
  CacheSite site = cache_site(f, l, tensor, AccessKind::Both, where, cache);
  const Buffer& b = *f.buffer(cache);
  f.body = rewrite_loops(f.body, site.copies, [&](const Stmt& loop) {
    auto written = footprint(f, *loop.body, tensor, AccessKind::Both);
    if (!written) return with_body(loop, loop.body);
    Box box = *written;
    bool load_first = !starts_by_overwriting(f, *loop.body, tensor, box);
    return with_body(loop, bind_box(f, box, cache, [&] {
                       IndexMap in_box = relative_to(box.min);
                       std::vector<StmtP> steps;
                       if (load_first)
                         steps.push_back(nest_over(f, box.min, box.extent, cache + "_in", [&](const std::vector<ExprP>& i) {
                           return make_store(cache, in_box(i), load(tensor, b.type, i));
                         }));
                       steps.push_back(redirect_accesses(loop.body, tensor, cache, in_box));
                       StmtP back = nest_over(f, box.min, box.extent, cache + "_c", [&](const std::vector<ExprP>& i) {
                         return make_store(tensor, i, load(cache, b.type, in_box(i)));
                       });
                       record_copy_stage(f, cache, back);
                       steps.push_back(back);
                       return make_allocate(cache, b.type, b.num_elements(), where, make_block(std::move(steps)));
                     }));
  });
}

}  // namespace ekb::lir
