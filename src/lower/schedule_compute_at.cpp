#include "lower/schedule_compute_at.h"

#include <algorithm>
#include <map>

#include "lir/mutator.h"
#include "lir/simplify.h"
#include "lower/region.h"
#include "lower/schedule_loops.h"

namespace ekb::lower {

using namespace lir;

namespace {

// The stage a placement directive may move: a temp's pure definition, alone, not yet placed.
Stage& placeable_producer(Func& f, const std::string& name, const std::string& directive) {
  Stage& p = stage_named(f, name);
  if (p.is_update || p.name != p.tensor)
    throw ScheduleError(directive + " places a tensor's pure definition; '" + name + "' is not one");
  const Buffer* b = f.buffer(p.tensor);
  if (b->role != BufferRole::Temp)
    throw ScheduleError("'" + name + "' is an " + (b->role == BufferRole::Output ? "output" : "input") +
                            "; only temps are placed",
                        "outputs are computed at root: the caller reads all of them");
  for (const Stage& s : f.stages)
    if (&s != &p && s.tensor == p.tensor)
      throw ScheduleError("'" + name + "' also has the stage '" + s.name + "', which would stay at root",
                          directive + " recomputes a pure definition only; a temp with updates is computed at root");
  if (!p.placement.empty())
    throw ScheduleError("'" + name + "' was already placed (" + p.placement + ")",
                        "give one placement directive per producer");
  return p;
}

// The For variables of the store to `buffer`, one per dimension ("" where an index is not one).
std::vector<std::string> store_loops(const Stmt& nest, const std::string& buffer) {
  std::vector<std::string> vars;
  for_each_stmt(nest, [&](const Stmt& s) {
    if (s.kind != StmtKind::Store || s.name != buffer || !vars.empty()) return;
    for (const ExprP& i : s.indices) vars.push_back(i->kind == ExprKind::Var ? i->name : "");
  });
  return vars;
}

// store_loops, after checking that each loop still runs over the whole dimension (bounds
// inference restricts exactly these loops).
std::vector<std::string> full_extent_loops(const Func& f, const Stmt& nest, const std::string& buffer) {
  const Buffer& b = *f.buffer(buffer);
  std::vector<std::string> vars = store_loops(nest, buffer);
  auto refuse = [&] {
    return ScheduleError("the loops of '" + buffer + "' no longer run over its whole extent (split, fused or "
                         "moved by an earlier directive)",
                         "write compute_at first, then schedule '" + buffer + "': its loops then cover the box");
  };
  for (size_t d = 0; d < vars.size(); ++d) {
    const Stmt* loop = vars[d].empty() ? nullptr : find_loop(nest, vars[d]);
    if (!loop || !is_int_const(*loop->min, 0) || !is_int_const(*loop->extent, b.shape[d])) throw refuse();
  }
  return vars;
}

// The statements from `from` (exclusive) to `to` (inclusive) must not write what `nest` reads:
// the producer moves past them.
void check_nothing_overwritten(const TopLevel& top, int from, int to, const Stmt& nest, const std::string& producer) {
  std::vector<std::string> inputs = buffers_read(nest);
  for (int k = from + 1; k <= to; ++k)
    for (const std::string& w : buffers_written(*top.stmts[k]))
      if (std::find(inputs.begin(), inputs.end(), w) != inputs.end())
        throw ScheduleError("'" + producer + "' reads '" + w + "', which a later statement writes before the reads of '" +
                                producer + "'",
                            "moving '" + producer + "' past that statement would change what it reads");
}

class Inliner : public Mutator {
 public:
  Inliner(const std::string& buffer, const std::vector<std::string>& vars, ExprP value)
      : buffer_(buffer), vars_(vars), value_(std::move(value)) {}
  using Mutator::mutate;
  ExprP mutate(const ExprP& e) override {
    ExprP m = mutate_children(e);
    if (m->kind != ExprKind::Load || m->name != buffer_) return m;
    ExprP v = value_;
    for (size_t d = 0; d < vars_.size(); ++d) v = substitute(v, vars_[d], m->args[d]);
    return v;
  }

 private:
  const std::string& buffer_;
  const std::vector<std::string>& vars_;
  ExprP value_;
};

}  // namespace

void compute_at(Func& f, const std::string& producer, const std::string& consumer, const std::string& loop_name) {
  Stage& c = stage_named(f, consumer);
  StageLoop& l = loop_named(c, loop_name);
  Stage& p = placeable_producer(f, producer, "compute_at");
  if (c.tensor == p.tensor) throw ScheduleError("'" + producer + "' cannot be computed inside its own loops");
  TopLevel top = top_level(f);
  int pi = top.producer_of(producer, "compute_at");
  StmtP nest = top.stmts[pi];
  full_extent_loops(f, *nest, producer);

  // The loop must hold every read of the producer: a read outside it would find nothing computed.
  std::vector<std::string> copies;
  int covered = 0;
  for (const Stmt* loop : loops_of(*f.body, l.vars)) {
    if (std::find(copies.begin(), copies.end(), loop->name) == copies.end()) copies.push_back(loop->name);
    covered += count_accesses(*loop->body, producer, AccessKind::Loads);
  }
  if (covered == 0)
    throw ScheduleError("'" + consumer + "' does not read '" + producer + "' inside loop '" + loop_name + "'",
                        "compute_at places a producer in a loop of a stage that reads it");
  if (covered < count_accesses(*f.body, producer, AccessKind::Loads))
    throw ScheduleError("loop '" + loop_name + "' does not cover every read of '" + producer +
                            "': it is also read outside the loop",
                        "compute it at a loop that encloses all its reads, or leave it at root");
  for (int j = 0; j < static_cast<int>(top.stmts.size()); ++j) {
    if (loops_of(*top.stmts[j], copies).empty()) continue;
    if (j <= pi)
      throw ScheduleError("loop '" + loop_name + "' of '" + consumer + "' runs before '" + producer + "' is computed");
    check_nothing_overwritten(top, pi, j, *nest, producer);
  }

  // Boxes per copy (a peeled tail reads less), the buffer sized for the largest.
  for (StmtP& s : top.stmts) s = lower_boundary_reads(f, s, producer);
  Buffer& storage = *std::find_if(f.buffers.begin(), f.buffers.end(), [&](const Buffer& b) { return b.name == producer; });
  std::vector<int64_t> shape(storage.shape.size(), 1);
  for (const StmtP& s : top.stmts)
    for (const Stmt* loop : loops_of(*s, copies))
      if (auto box = footprint(f, *loop->body, producer, AccessKind::Loads))
        for (size_t d = 0; d < shape.size(); ++d) shape[d] = std::max(shape[d], box->size[d]);
  int64_t elements = 1;
  for (int64_t n : shape) elements *= n;
  int64_t bytes = elements * ir::byte_size(storage.type);
  for (const std::string& v : copies)
    if (in_parallel_loop(*f.body, v) && bytes > kMaxPrivateBytes)
      throw ScheduleError("the box of '" + producer + "' that loop '" + loop_name + "' reads takes " +
                              std::to_string(bytes) + " bytes, too many for a per-thread buffer in a parallel loop",
                          "compute it at an inner loop");

  const std::map<std::string, IntInterval> ranges = loop_ranges(*f.body);
  top.stmts.erase(top.stmts.begin() + pi);
  top.drop_allocation(producer);
  bool first = true;
  for (StmtP& consumer_nest : top.stmts) {
    if (loops_of(*consumer_nest, copies).empty()) continue;
    consumer_nest = rewrite_loops(consumer_nest, copies, [&](const Stmt& loop) {
      StmtP computed = nest;
      if (!first) {
        LoopChain chain = loop_chain(nest);
        computed = fresh_copy(f, chain, chain.body).build();
      }
      first = false;
      auto read = footprint(f, *loop.body, producer, AccessKind::Loads);
      if (!read) return with_body(loop, loop.body);  // a copy without reads needs nothing
      Box box = *read;
      for (size_t d = 0; d < box.min.size(); ++d) {
        box.min[d] = simplify(box.min[d], ranges);
        box.extent[d] = simplify(box.extent[d], ranges);
      }
      StmtP body = bind_box(f, box, producer, [&] {
        // The producer's loops over the box, its store and the consumer's reads relative to it.
        std::vector<std::string> dims = store_loops(*computed, producer);
        std::map<std::string, size_t> dim_of;
        for (size_t d = 0; d < dims.size(); ++d) dim_of[dims[d]] = d;
        std::function<StmtP(const StmtP&)> restrict_to_box = [&](const StmtP& s) {
          return rewrite_loops(s, dims, [&](const Stmt& dim_loop) {
            auto n = std::make_shared<Stmt>(dim_loop);
            n->min = box.min[dim_of.at(dim_loop.name)];
            n->extent = box.extent[dim_of.at(dim_loop.name)];
            n->body = restrict_to_box(dim_loop.body);  // the loops of the other dimensions
            return StmtP(n);
          });
        };
        StmtP restricted = restrict_to_box(computed);
        IndexMap in_box = relative_to(box.min);
        return make_allocate(producer, storage.type, elements, MemoryScope::Global,
                             make_block({redirect_accesses(restricted, producer, producer, in_box),
                                         redirect_accesses(loop.body, producer, producer, in_box)}));
      });
      return with_body(loop, body);
    });
  }
  f.body = top.build();
  // Bounds were clamped to the whole tensor; from now on it is stored as the box.
  storage.shape = shape;
  p.placement = consumer + "." + loop_name;
}

void compute_inline(Func& f, const std::string& producer) {
  Stage& p = placeable_producer(f, producer, "compute_inline");
  TopLevel top = top_level(f);
  int pi = top.producer_of(producer, "compute_inline");
  LoopChain chain = loop_chain(top.stmts[pi]);
  if (!chain.guards.empty() || chain.body->kind != StmtKind::Store)
    throw ScheduleError("'" + producer + "' is not computed by a single expression (its definition has a reduction, "
                            "or its loops were split)",
                        "inlining would repeat the reduction at every read; use compute_at to compute it near its "
                        "consumer");
  std::vector<std::string> dims = full_extent_loops(f, *top.stmts[pi], producer);
  const StmtP& store = chain.body;
  if (count_accesses(*store, producer, AccessKind::Loads) > 0)
    throw ScheduleError("the definition of '" + producer + "' reads '" + producer + "'");
  int last = pi;
  for (size_t k = pi + 1; k < top.stmts.size(); ++k)
    if (count_accesses(*top.stmts[k], producer, AccessKind::Loads) > 0) last = static_cast<int>(k);
  check_nothing_overwritten(top, pi, last, *store, producer);

  top.stmts.erase(top.stmts.begin() + pi);
  top.drop_allocation(producer);
  Inliner inline_reads(producer, dims, store->value);
  for (StmtP& s : top.stmts) s = inline_reads.mutate(lower_boundary_reads(f, s, producer));
  f.body = top.build();
  p.placement = "inline";
  p.loops.clear();
}

void compute_root(Func& f, const std::string& producer) {
  Stage& p = stage_named(f, producer);
  if (!p.placement.empty())
    throw ScheduleError("'" + producer + "' was already placed (" + p.placement +
                            ") by an earlier directive, which compute_root does not undo",
                        "remove the earlier placement directive");
  // At root, in program order, over the whole extent: the default lowering already computes it so.
}

}  // namespace ekb::lower
