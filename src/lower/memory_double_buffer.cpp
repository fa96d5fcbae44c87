#include "lower/memory_double_buffer.h"

#include <algorithm>
#include <functional>

#include "lir/mutator.h"
#include "lower/region.h"
#include "lower/schedule_loops.h"

namespace ekb::lower {

using namespace lir;

namespace {

bool is_copy_into(const Stmt& s, const std::string& cache) {
  if (s.kind != StmtKind::For || s.for_kind != ForKind::GpuCooperative) return false;
  bool into = false;
  for_each_stmt(s, [&](const Stmt& x) { into |= x.kind == StmtKind::Store && x.name == cache; });
  return into;
}

// The step's first-iteration prologue: `if (ko == first) { copies...; [barrier] }`.
bool is_prologue(const Stmt& s) {
  if (s.kind != StmtKind::IfThenElse || s.else_body) return false;
  bool copies = false;
  for_each_stmt(*s.body, [&](const Stmt& x) { copies |= x.kind == StmtKind::For && x.for_kind == ForKind::GpuCooperative; });
  return copies;
}

// Where the cache's copy phase is: the loop around it, the lets between that loop and the phase
// (the box of each iteration), and the phase block itself.
struct Site {
  const Stmt* loop = nullptr;
  std::vector<const Stmt*> lets;
  const Stmt* phase = nullptr;
  // Something else between the loop and the cache (a condition, a block): the copy of the next
  // iteration would not run under the same conditions as that iteration's.
  bool nested = false;
};

// Finds the Allocate of `cache` and the chain down to its phase (lets and shared allocations only).
Site find_site(const Func& f, const std::string& cache) {
  Site site;
  std::function<bool(const Stmt&, const Stmt*, std::vector<const Stmt*>, bool)> walk =
      [&](const Stmt& s, const Stmt* loop, std::vector<const Stmt*> lets, bool nested) {
        if (s.kind == StmtKind::For) {
          loop = &s;
          lets.clear();
          nested = false;
        } else if (s.kind == StmtKind::LetStmt) {
          lets.push_back(&s);
        } else if (s.kind != StmtKind::Allocate || s.name != cache) {
          nested |= s.kind != StmtKind::Allocate;
        }
        if (s.kind == StmtKind::Allocate && s.name == cache) {
          if (s.scope != MemoryScope::Shared)
            throw ScheduleError("'" + cache + "' is not a shared cache: double_buffer alternates two buffers of "
                                "a cache_read into shared memory",
                                "cache_read it with scope shared first");
          const Stmt* p = s.body.get();
          while (p->kind == StmtKind::LetStmt || (p->kind == StmtKind::Allocate && p->scope == MemoryScope::Shared)) {
            if (p->kind == StmtKind::LetStmt) lets.push_back(p);
            p = p->body.get();
          }
          site = {loop, lets, p, nested};
          return true;
        }
        for (const StmtP& c : {s.body, s.else_body})
          if (c && walk(*c, loop, lets, nested)) return true;
        for (const StmtP& c : s.stmts)
          if (walk(*c, loop, lets, nested)) return true;
        return false;
      };
  if (!f.body || !walk(*f.body, nullptr, {}, false))
    throw ScheduleError("there is no cache '" + cache + "'", "double_buffer names a cache that cache_read made");
  return site;
}

// `s` with the cache's accesses given a leading index: the buffer `slot`.
StmtP in_slot(const StmtP& s, const std::string& cache, const ExprP& slot) {
  return redirect_accesses(s, cache, cache, [&](const std::vector<ExprP>& i) {
    std::vector<ExprP> out{slot};
    out.insert(out.end(), i.begin(), i.end());
    return out;
  });
}

}  // namespace

void double_buffer(Func& f, const std::string& cache) {
  Site site = find_site(f, cache);
  if (!site.loop || site.loop->for_kind != ForKind::Serial)
    throw ScheduleError("'" + cache + "' is filled " +
                            (site.loop ? "at loop '" + site.loop->name + "', which is " +
                                             std::string(for_kind_name(site.loop->for_kind))
                                       : std::string("outside every loop")) +
                            ": double buffering loads the next iteration's copy during this one, which needs a "
                            "sequential loop",
                        "cache at a sequential loop inside the block loops (a GEMM's k loop)");
  if (site.nested)
    throw ScheduleError("'" + cache + "' is filled under a condition or beside other statements inside loop '" +
                            site.loop->name + "', so the next iteration's copy could not be issued ahead of it",
                        "cache at a loop whose body is the cache's copy phase (split without a guard there)");
  const Stmt& phase = *site.phase;
  if (phase.kind != StmtKind::Block)
    throw ScheduleError("'" + cache + "' has no copy phase of its own at loop '" + site.loop->name + "'");
  auto barrier = std::find_if(phase.stmts.begin(), phase.stmts.end(),
                              [](const StmtP& x) { return x->kind == StmtKind::Barrier; });
  auto copy = std::find_if(phase.stmts.begin(), barrier, [&](const StmtP& x) { return is_copy_into(*x, cache); });
  if (barrier == phase.stmts.end() || copy == barrier)
    throw ScheduleError("'" + cache + "' is already double-buffered");

  const Stmt& loop = *site.loop;
  const ExprP ko = var(loop.name, ScalarType::Index);
  const ExprP step = binary(BinOp::Sub, ko, loop.min);
  const ExprP current = binary(BinOp::Mod, step, index_imm(2));
  const ExprP next = binary(BinOp::Mod, binary(BinOp::Add, step, index_imm(1)), index_imm(2));
  const ExprP first = binary(BinOp::Eq, ko, loop.min);
  const ExprP has_next =
      binary(BinOp::Lt, binary(BinOp::Add, ko, index_imm(1)), binary(BinOp::Add, loop.min, loop.extent));

  // The next iteration's copy: the lets of the box inlined, ko + 1 for ko, then into the other buffer.
  StmtP next_copy = *copy;
  for (auto it = site.lets.rbegin(); it != site.lets.rend(); ++it)
    next_copy = substitute(next_copy, (*it)->name, (*it)->value);
  next_copy = in_slot(substitute(next_copy, loop.name, binary(BinOp::Add, ko, index_imm(1))), cache, next);

  std::vector<StmtP> before;  // the copies before the barrier, this cache's made a prologue
  for (auto it = phase.stmts.begin(); it != barrier; ++it)
    before.push_back(it == copy ? make_if(first, in_slot(*it, cache, current)) : *it);
  std::vector<StmtP> after{make_if(has_next, next_copy)};
  for (auto it = barrier + 1; it != phase.stmts.end(); ++it) after.push_back(in_slot(*it, cache, current));

  std::vector<StmtP> stmts;
  if (std::all_of(before.begin(), before.end(), [](const StmtP& x) { return is_prologue(*x); })) {
    // Every cache of the phase is double-buffered: only the first iteration waits for its copies.
    std::vector<StmtP> prologue;
    for (const StmtP& p : before) prologue.push_back(p->body);
    prologue.push_back(make_barrier());
    stmts.push_back(make_if(first, make_block(prologue)));
  } else {
    stmts = before;
    stmts.push_back(*barrier);
  }
  stmts.insert(stmts.end(), after.begin(), after.end());
  StmtP new_phase = make_block(stmts);

  // The phase replaced, the cache's allocation doubled (a leading dimension of 2).
  struct Rewriter : Mutator {
    const Stmt* phase;
    StmtP replacement;
    std::string cache;
    using Mutator::mutate;
    StmtP mutate(const StmtP& s) override {
      if (s.get() == phase) return replacement;
      StmtP m = mutate_children(s);
      if (m->kind == StmtKind::Allocate && m->name == cache) {
        auto n = std::make_shared<Stmt>(*m);
        n->extent = index_imm(2 * m->extent->int_value);
        return n;
      }
      return m;
    }
  } rewriter;
  rewriter.phase = &phase;
  rewriter.replacement = new_phase;
  rewriter.cache = cache;
  f.body = rewriter.mutate(f.body);
  for (Buffer& b : f.buffers)
    if (b.name == cache) b.shape.insert(b.shape.begin(), 2);
}

}  // namespace ekb::lower
