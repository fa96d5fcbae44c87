#include "lower/schedule_pipeline.h"

#include <algorithm>
#include <set>

#include "lir/mutator.h"
#include "lir/simplify.h"
#include "lower/region.h"
#include "lower/schedule_loops.h"

namespace ekb::lower {

using namespace lir;

namespace {

// Nodes that only scope what is below them; the statements under them are the body's steps.
bool is_scope(const Stmt& s) {
  return s.kind == StmtKind::Block || s.kind == StmtKind::LetStmt || s.kind == StmtKind::Allocate;
}

std::vector<StmtP> children(const Stmt& s) {
  if (s.kind == StmtKind::Block) return s.stmts;
  std::vector<StmtP> out;
  if (s.body) out.push_back(s.body);
  if (s.else_body) out.push_back(s.else_body);
  return out;
}

// The nodes from `root` down to `target`, both included; empty when target is not under root.
bool path_to(const Stmt& root, const Stmt* target, std::vector<const Stmt*>& path) {
  path.push_back(&root);
  if (&root == target) return true;
  for (const StmtP& c : children(root))
    if (path_to(*c, target, path)) return true;
  path.pop_back();
  return false;
}
std::vector<const Stmt*> path_to(const Stmt& root, const Stmt* target) {
  std::vector<const Stmt*> path;
  path_to(root, target, path);
  return path;
}
bool contains(const Stmt& root, const Stmt* target) { return !path_to(root, target).empty(); }

// The statements under the scopes of `s` (lets, allocations, blocks), in order.
void steps(const StmtP& s, std::vector<StmtP>& out) {
  if (!is_scope(*s)) return out.push_back(s);
  for (const StmtP& c : children(*s)) steps(c, out);
}

// The consumer's nest in the loop body: the one step that stores to its tensor, a loop.
const Stmt* consumer_nest(const StmtP& body, const std::string& tensor, const std::string& consumer) {
  std::vector<StmtP> all;
  steps(body, all);
  const Stmt* nest = nullptr;
  for (const StmtP& s : all) {
    if (count_accesses(*s, tensor, AccessKind::Stores) == 0) continue;
    if (nest || s->kind != StmtKind::For)
      throw ScheduleError("'" + consumer + "' is not one loop nest in the loop's body (it is split into several "
                          "statements, or under a condition or an accumulator)",
                          "pipeline the loop whose body ends with the consumer's nest (compute_at its producers there; "
                          "split the loop after compute_at, so that a guard covers the whole body)");
    nest = s.get();
  }
  if (!nest) throw ScheduleError("'" + consumer + "' stores nothing inside the loop");
  return nest;
}

struct Rotated {
  std::string name;
  ScalarType type;
  int64_t elements;
  MemoryScope scope;
};

// The rotated temps' allocations removed from the body: they move around the loop.
class DropAllocations : public Mutator {
 public:
  explicit DropAllocations(const std::vector<Rotated>& temps) {
    for (const Rotated& t : temps) names_.insert(t.name);
  }
  using Mutator::mutate;
  ExprP mutate(const ExprP& e) override { return e; }
  StmtP mutate(const StmtP& s) override {
    if (s->kind == StmtKind::Allocate && names_.count(s->name)) return mutate(s->body);
    return mutate_children(s);
  }

 private:
  std::set<std::string> names_;
};

}  // namespace

void pipeline(Func& f, const std::string& consumer, const std::string& loop_name, const std::string& producer,
              const std::string& producer_loop) {
  Stage& c = stage_named(f, consumer);
  StageLoop& lx = loop_named(c, loop_name);
  Stage& p = stage_named(f, producer);
  const StageLoop& lp = loop_named(p, producer_loop);
  if (p.tensor == c.tensor) throw ScheduleError("'" + producer + "' is a stage of '" + consumer + "' itself");
  if (lx.vars.size() != 1)
    throw ScheduleError("loop '" + loop_name + "' has " + std::to_string(lx.vars.size()) +
                            " copies (a peeled tail, or a reduction's nests)",
                        "pipeline a loop that exists once: split without tail=peel");
  const Stmt* loop = find_loop(*f.body, lx.vars[0]);
  if (!loop) throw ScheduleError("loop '" + loop_name + "' was not found");
  if (loop->for_kind != ForKind::Serial)
    throw ScheduleError("loop '" + loop_name + "' is " + std::string(for_kind_name(loop->for_kind)) +
                            ": a pipeline needs its iterations in order, one after another",
                        "split the loop, pipeline the inner one and parallelize the outer one");
  const std::string x = loop->name;
  // A guarded split's tail leaves the whole body under a condition on x: it becomes part of the
  // guards of both halves (the consumer's at x - 1).
  StmtP steps_body = loop->body;
  ExprP guard;
  if (steps_body->kind == StmtKind::IfThenElse && !steps_body->else_body) {
    guard = steps_body->value;
    steps_body = steps_body->body;
  }

  // The consumer's nest and the producer's loop, each directly in the body.
  const Stmt* nest = consumer_nest(steps_body, c.tensor, consumer);
  const Stmt* ploop = nullptr;
  for (const Stmt* l : loops_of(*steps_body, lp.vars)) {
    if (!contains(*nest, l)) {
      if (ploop)
        throw ScheduleError("loop '" + producer_loop + "' of '" + producer + "' runs more than once in loop '" +
                            loop_name + "'");
      ploop = l;
    }
  }
  if (!ploop)
    throw ScheduleError("loop '" + producer_loop + "' of '" + producer + "' is not inside loop '" + loop_name + "'",
                        "compute_at the producer in the loop first");
  for (const Stmt* s : path_to(*steps_body, ploop)) {
    if (s == ploop || s->kind == StmtKind::Block || s->kind == StmtKind::Allocate) continue;
    if (s->kind == StmtKind::LetStmt && !has_load(*s->value)) continue;
    if (s->kind == StmtKind::For && is_int_const(*s->extent, 1)) continue;
    throw ScheduleError("loop '" + producer_loop + "' of '" + producer +
                        "' is under a condition, an accumulator or a loop of several iterations inside loop '" +
                        loop_name + "'; the consumer's nest cannot be fused into it");
  }
  auto ne = constant_extent(*nest), pe = constant_extent(*ploop);
  if (!ne || !pe || *ne != *pe || !equal(nest->min, ploop->min))
    throw ScheduleError("the consumer's loop '" + nest->name + "' and loop '" + producer_loop + "' of '" + producer +
                            "' do not have the same constant range",
                        "split or vectorize both by the same factor");
  if (nest->for_kind != ForKind::Serial || ploop->for_kind != ForKind::Serial)
    throw ScheduleError("the loops to fuse must be serial (their inner loops may be vectorized or unrolled)");

  // What moves one iteration later must neither feed the producers nor be overwritten by them.
  const std::set<std::string> inner = allocated_under(*nest);
  for (const std::string& b : buffers_written(*nest))
    if (b != c.tensor && !inner.count(b))
      throw ScheduleError("the consumer's nest also writes '" + b + "'");
  for (const std::string& v : outer_scalars_assigned(*nest))
    throw ScheduleError("the consumer's nest updates the scalar '" + v + "', declared outside it");
  if (count_accesses(*steps_body, c.tensor, AccessKind::Loads) > count_accesses(*nest, c.tensor, AccessKind::Loads))
    throw ScheduleError("a producer in loop '" + loop_name + "' reads '" + c.tensor +
                        "', which would then be written one iteration later");
  std::vector<Rotated> rotated;
  const std::vector<const Stmt*> nest_path = path_to(*steps_body, nest);
  std::set<std::string> scoped;
  for (const Stmt* s : nest_path)
    if (s->kind == StmtKind::LetStmt && has_load(*s->value) && uses_var(*nest, s->name)) {
      // Its late copy would read memory one iteration after the value was bound.
      throw ScheduleError("the consumer's nest reads the let '" + s->name + "', which loads a value");
    } else if (s->kind == StmtKind::Allocate) {
      scoped.insert(s->name);
      if (count_accesses(*nest, s->name, AccessKind::Loads) == 0) continue;
      if (s->extent->kind != ExprKind::IntImm) throw ScheduleError("'" + s->name + "' has no constant size");
      rotated.push_back({s->name, s->type, s->extent->int_value, s->scope});
    }
  for (const std::string& b : buffers_read(*nest)) {
    if (scoped.count(b) || inner.count(b)) continue;
    if (count_accesses(*steps_body, b, AccessKind::Stores) > count_accesses(*nest, b, AccessKind::Stores))
      throw ScheduleError("'" + b + "', which the consumer reads, is written in every iteration of loop '" +
                              loop_name + "' but allocated outside it, so it cannot get a slot per iteration",
                          "compute_at its producer in loop '" + loop_name + "'");
  }
  int64_t private_bytes = 0;
  for (const Rotated& t : rotated) private_bytes += 2 * t.elements * ir::byte_size(t.type);
  if (in_parallel_loop(*f.body, x) && private_bytes > kMaxPrivateBytes)
    throw ScheduleError("the two slots of the temps the consumer reads take " + std::to_string(private_bytes) +
                            " bytes, too many for per-thread buffers in a parallel loop",
                        "pipeline a loop whose producers compute less per iteration");

  // Every access of a rotated temp gets the slot x % 2 as a first index; then the two loops are
  // found again in the rewritten body, by their variables.
  const ExprP xv = var(x, ScalarType::Index);
  const ExprP slot = binary(BinOp::Mod, xv, index_imm(2));
  StmtP body = DropAllocations(rotated).mutate(steps_body);
  for (const Rotated& t : rotated)
    body = redirect_accesses(body, t.name, t.name, [&](std::vector<ExprP> indices) {
      indices.insert(indices.begin(), slot);
      return indices;
    });
  const Stmt* nest2 = find_loop(*body, nest->name);
  const Stmt* ploop2 = find_loop(*body, ploop->name);

  // The consumer's iteration for x - 1: the lets it reads put in, the producer's loop variable.
  StmtP late = nest2->body;
  const ExprP previous = binary(BinOp::Sub, xv, index_imm(1));
  const std::vector<const Stmt*> late_path = path_to(*body, nest2);
  for (auto it = late_path.rbegin(); it != late_path.rend(); ++it)
    if ((*it)->kind == StmtKind::LetStmt) late = substitute(late, (*it)->name, (*it)->value);
  late = substitute(substitute(late, nest2->name, var(ploop2->name, ScalarType::Index)), x, previous);

  ExprP now = binary(BinOp::Lt, xv, binary(BinOp::Add, loop->min, loop->extent));
  ExprP before = binary(BinOp::Gt, xv, loop->min);
  if (guard) {
    now = binary(BinOp::And, now, guard);
    before = binary(BinOp::And, before, substitute(guard, x, previous));
  }
  now = simplify(now);
  before = simplify(before);
  std::function<StmtP(const StmtP&)> rebuild = [&](const StmtP& s) -> StmtP {
    if (s.get() == nest2) return make_block({});
    // Every iteration but the first and the last runs both, fused; those two run one alone.
    if (s.get() == ploop2)
      return make_if(binary(BinOp::And, before, now), with_body(*s, make_block({s->body, late})),
                     make_block({make_if(now, s), make_if(before, with_body(*s, late))}));
    if (!contains(*s, ploop2) && !contains(*s, nest2)) return make_if(now, s);
    if (s->kind == StmtKind::Block) {
      std::vector<StmtP> out;
      for (const StmtP& c2 : s->stmts) out.push_back(rebuild(c2));
      return make_block(out);
    }
    return with_body(*s, rebuild(s->body));  // a let, an allocation or a loop of one iteration
  };
  auto pipelined = std::make_shared<Stmt>(*loop);
  pipelined->extent = simplify(binary(BinOp::Add, loop->extent, index_imm(1)));
  pipelined->body = rebuild(body);
  StmtP replacement = pipelined;
  for (auto it = rotated.rbegin(); it != rotated.rend(); ++it)
    replacement = make_allocate(it->name, it->type, 2 * it->elements, it->scope, replacement);
  f.body = rewrite_loops(f.body, {x}, [&](const Stmt&) { return replacement; });

  for (const Rotated& t : rotated)
    for (Buffer& b : f.buffers)
      if (b.name == t.name) b.shape.insert(b.shape.begin(), 2);
  // The consumer's loop is now the producer's.
  if (StageLoop* fused = c.loop_of_var(nest->name)) {
    auto& vars = fused->vars;
    vars.erase(std::remove(vars.begin(), vars.end(), nest->name), vars.end());
    if (vars.empty())
      c.loops.erase(std::remove_if(c.loops.begin(), c.loops.end(), [](const StageLoop& l) { return l.vars.empty(); }),
                    c.loops.end());
  }
}

}  // namespace ekb::lower
