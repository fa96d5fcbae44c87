#include "lower/schedule_fuse.h"

#include <algorithm>
#include <set>

#include "lir/mutator.h"
#include "lir/simplify.h"
#include "lower/schedule_loops.h"

namespace ekb::lower {

using namespace lir;

namespace {

bool independent(LoopRole r) { return r == LoopRole::Pure || r == LoopRole::Free; }

LoopRole fused_role(const StageLoop& outer, const StageLoop& inner) {
  LoopRole a = outer.role, b = inner.role;
  if (independent(a) && independent(b)) return a == LoopRole::Pure && b == LoopRole::Pure ? LoopRole::Pure : LoopRole::Free;
  if (a == b) return a;
  if ((a == LoopRole::Ordered && b == LoopRole::Free) || (a == LoopRole::Free && b == LoopRole::Ordered))
    return LoopRole::Ordered;
  throw ScheduleError("cannot fuse the " + std::string(loop_role_name(a)) + " loop '" + outer.name + "' with the " +
                      std::string(loop_role_name(b)) + " loop '" + inner.name + "'",
                      "fuse loops of the same kind: pure with pure, reduction with reduction");
}

}  // namespace

void fuse(Func& f, const std::string& stage, const std::string& outer, const std::string& inner,
          const std::string& fused) {
  Stage& st = stage_named(f, stage);
  StageLoop lo = loop_named(st, outer), li = loop_named(st, inner);
  if (outer == inner) throw ScheduleError("fuse needs two different loops");
  StageLoop result{fused, fused_role(lo, li), {}, lo.recomputes || li.recomputes};
  std::set<std::string> inner_fused;
  f.body = rewrite_loops(f.body, lo.vars, [&](const Stmt& o) {
    LoopChain c = loop_chain(std::make_shared<Stmt>(o));
    if (c.loops.size() < 2 || std::find(li.vars.begin(), li.vars.end(), c.loops[1]->name) == li.vars.end())
      throw ScheduleError("loop '" + inner + "' is not directly inside loop '" + outer + "'",
                          "reorder them to be adjacent first");
    const Stmt& i = *c.loops[1];
    if (uses_var(*i.min, o.name) || uses_var(*i.extent, o.name))
      throw ScheduleError("the bounds of loop '" + inner + "' depend on loop '" + outer +
                          "' (a triangular range): the fused loop would have no fixed shape");
    inner_fused.insert(i.name);
    std::string v = f.fresh_name(fused);
    result.vars.push_back(v);
    ExprP fv = var(v, ScalarType::Index);
    ExprP inner_extent = simplify(i.extent);
    LoopChain rest = c;
    rest.loops.erase(rest.loops.begin(), rest.loops.begin() + 2);
    StmtP body = rest.build();
    body = substitute(body, o.name, binary(BinOp::Add, o.min, binary(BinOp::Div, fv, inner_extent)));
    body = substitute(body, i.name, binary(BinOp::Add, i.min, binary(BinOp::Mod, fv, inner_extent)));
    ExprP extent = binary(BinOp::Mul, binary(BinOp::Max, simplify(o.extent), index_imm(0)),
                          binary(BinOp::Max, inner_extent, index_imm(0)));
    return make_for(v, index_imm(0), simplify(extent), body, o.for_kind);
  });
  if (inner_fused.size() != li.vars.size())
    throw ScheduleError("loop '" + inner + "' also runs outside loop '" + outer + "' (a peeled tail)",
                        "fuse before splitting with tail=peel, vectorizing or unrolling");
  auto& loops = st.loops;
  auto at = std::find_if(loops.begin(), loops.end(), [&](const StageLoop& l) { return l.name == outer; });
  *at = result;
  loops.erase(std::find_if(loops.begin(), loops.end(), [&](const StageLoop& l) { return l.name == inner; }));
}

}  // namespace ekb::lower
