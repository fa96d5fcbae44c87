#include "lower/schedule_rfactor.h"

#include <algorithm>
#include <set>

#include "lir/mutator.h"
#include "lower/schedule_loops.h"

namespace ekb::lower {

using namespace lir;

namespace {

class Rfactor : public Mutator {
 public:
  Rfactor(Func& f, Stage& st, const std::string& loop, const std::string& partial)
      : f_(f), st_(st), loop_(loop), partial_(partial) {
    for (const StageLoop& l : st.loops)
      if (l.role == LoopRole::Pure) pure_vars_.insert(l.vars.begin(), l.vars.end());
    const StageLoop& r = loop_named(st, loop);
    r_vars_.insert(r.vars.begin(), r.vars.end());
  }

  using Mutator::mutate;
  ExprP mutate(const ExprP& e) override { return e; }
  StmtP mutate(const StmtP& s) override {
    if (s->kind == StmtKind::For && pure_vars_.count(s->name)) return rfactor_nest(s);
    return mutate_children(s);
  }

  // The partial stage: its loops by name (pure copies, rf, the other reduction loops).
  Stage partial_stage;
  std::vector<std::string> moved_reduction_loops;  // C's reduction loops now in the partial stage
  std::vector<std::string> combine_vars;            // C's new reduction loop rf, per copy
  std::vector<Buffer> buffers;

 private:
  [[noreturn]] void unsupported(const std::string& why) {
    throw ScheduleError("cannot rfactor loop '" + loop_ + "' of stage '" + st_.name + "': " + why);
  }

  StmtP rfactor_nest(const StmtP& top) {
    LoopChain pure = loop_chain(top);
    const Stmt& decl = *pure.body;
    if (decl.kind == StmtKind::DeclareVar && decl.body->kind == StmtKind::DeclareVar)
      unsupported("argmax/argmin keep the first extreme index; only sum, prod, max and min can be reassociated");
    if (decl.kind != StmtKind::DeclareVar || decl.body->kind != StmtKind::Block ||
        decl.body->stmts.front()->kind != StmtKind::For)
      unsupported("the reduction must be the statement's first, directly inside its pure loops (rfactor before "
                  "reorder, peel, vectorize or unroll of the pure loops)");
    const StmtP& red_top = decl.body->stmts.front();
    LoopChain red = loop_chain(red_top);
    int at = -1;
    for (size_t i = 0; i < red.loops.size(); ++i)
      if (r_vars_.count(red.loops[i]->name)) at = static_cast<int>(i);
    if (at < 0) unsupported("it is not perfectly nested with the statement's first reduction");
    const Stmt& step = *red.body;
    const std::string& acc = decl.name;
    bool commutative = step.kind == StmtKind::Assign && step.name == acc && step.value->kind == ExprKind::Binary &&
                       step.value->args[0]->kind == ExprKind::Var && step.value->args[0]->name == acc &&
                       (step.value->bin_op == BinOp::Add || step.value->bin_op == BinOp::Mul ||
                        step.value->bin_op == BinOp::Min || step.value->bin_op == BinOp::Max);
    if (!commutative) unsupported("only sum, prod, max and min reductions can be reassociated (argmax/argmin keep the first index)");
    const Stmt& r = *red.loops[static_cast<size_t>(at)];
    std::optional<int64_t> extent = constant_extent(r);
    if (!extent) unsupported("its extent is not a constant, so the partial results have no fixed shape");
    for (const StmtP& l : red.loops)
      if (uses_var(*r.min, l->name) || uses_var(*r.extent, l->name))
        unsupported("its bounds depend on loop '" + l->name + "'");
    const Stmt* store = nullptr;
    for_each_stmt(*decl.body, [&](const Stmt& x) {
      if (x.kind == StmtKind::Store && x.name == st_.tensor) store = &x;
    });
    if (!store) unsupported("the stage does not store its tensor after the reduction");

    // The partial-result buffer: the stage's shape plus one dimension for rf.
    const Buffer& out = *f_.buffer(st_.tensor);
    Buffer p{f_.fresh_name(st_.tensor + "_" + partial_), decl.type, out.shape, BufferRole::Temp};
    p.shape.push_back(*extent);
    buffers.push_back(p);
    partial_stage.tensor = p.name;
    std::vector<ExprP> pidx = store->indices;

    // Partial nest: for (pure copies) for rf { acc' = identity; for (other loops) acc' op= ...; P = acc' }.
    std::string rf = f_.fresh_name(partial_);
    std::string pacc = f_.fresh_name(acc);
    ExprP r_value = binary(BinOp::Add, r.min, var(rf, ScalarType::Index));
    LoopChain others = red;
    others.loops.erase(others.loops.begin() + at);
    others.body = make_assign(pacc, binary(step.value->bin_op, var(pacc, decl.type), step.value->args[1]));
    StmtP partial_body = substitute(others.build(), r.name, r_value);
    std::vector<ExprP> store_idx = pidx;
    store_idx.push_back(var(rf, ScalarType::Index));
    partial_body = make_declare(pacc, decl.type, decl.value,
                                make_block({partial_body, make_store(p.name, store_idx, var(pacc, decl.type))}));
    LoopChain copy = fresh_copy(f_, pure, make_for(rf, index_imm(0), index_imm(*extent), partial_body));
    for (size_t i = 0; i < pure.loops.size(); ++i) move_to_partial(pure.loops[i]->name, copy.loops[i]->name);
    add_partial_loop(partial_, LoopRole::Pure, rf);
    for (const StmtP& l : others.loops) move_reduction(l->name);

    // The stage combines the partial results over rf.
    std::string rc = f_.fresh_name(partial_);
    combine_vars.push_back(rc);
    std::vector<ExprP> load_idx = pidx;
    load_idx.push_back(var(rc, ScalarType::Index));
    StmtP combine = make_for(rc, index_imm(0), index_imm(*extent),
                             make_assign(acc, binary(step.value->bin_op, var(acc, decl.type),
                                                     load(p.name, decl.type, load_idx))));
    std::vector<StmtP> stmts = decl.body->stmts;
    stmts.front() = combine;
    auto new_decl = std::make_shared<Stmt>(decl);
    new_decl->body = make_block(stmts);
    LoopChain stage_nest = pure;
    stage_nest.body = new_decl;
    return make_allocate(p.name, p.type, p.num_elements(), MemoryScope::Global,
                         make_block({copy.build(), stage_nest.build()}));
  }

  // fresh_copy recorded the copy as the stage's own loop; it belongs to the partial stage.
  void move_to_partial(const std::string& original, const std::string& copy) {
    StageLoop* l = st_.loop_of_var(original);
    auto& vars = l->vars;
    vars.erase(std::remove(vars.begin(), vars.end(), copy), vars.end());
    add_partial_loop(l->name, LoopRole::Pure, copy, l->recomputes);
  }

  void move_reduction(const std::string& v) {
    StageLoop* l = st_.loop_of_var(v);
    add_partial_loop(l->name, LoopRole::Reduction, v);
    if (std::find(moved_reduction_loops.begin(), moved_reduction_loops.end(), l->name) == moved_reduction_loops.end())
      moved_reduction_loops.push_back(l->name);
  }

  void add_partial_loop(const std::string& name, LoopRole role, const std::string& v, bool recomputes = false) {
    if (StageLoop* l = partial_stage.loop(name)) l->vars.push_back(v);
    else partial_stage.loops.push_back({name, role, {v}, recomputes});
  }

  Func& f_;
  Stage& st_;
  std::string loop_, partial_;
  std::set<std::string> pure_vars_, r_vars_;
};

}  // namespace

void rfactor(Func& f, const std::string& stage, const std::string& loop, const std::string& partial) {
  Stage& st = stage_named(f, stage);
  if (st.is_update)
    throw ScheduleError("cannot rfactor update '" + stage + "': its statements run in order");
  if (loop_named(st, loop).role != LoopRole::Reduction)
    throw ScheduleError("cannot rfactor loop '" + loop + "': it is not a reduction loop of '" + stage + "'");
  if (f.stage(partial)) throw ScheduleError("'" + partial + "' already names a stage");
  Rfactor r(f, st, loop, partial);
  f.body = r.mutate(f.body);
  if (r.combine_vars.empty())
    throw ScheduleError("cannot rfactor loop '" + loop + "' of stage '" + stage + "': no loop nest of it was found");
  for (const Buffer& b : r.buffers) f.buffers.push_back(b);
  // The stage now reduces over rf; the other reduction loops moved to the partial stage.
  Stage& s = *f.stage(stage);
  auto& loops = s.loops;
  loops.erase(std::remove_if(loops.begin(), loops.end(),
                             [&](const StageLoop& l) {
                               return std::find(r.moved_reduction_loops.begin(), r.moved_reduction_loops.end(),
                                                l.name) != r.moved_reduction_loops.end();
                             }),
              loops.end());
  StageLoop* old = s.loop(loop);
  *old = {partial, LoopRole::Reduction, r.combine_vars};
  r.partial_stage.name = partial;
  auto at = std::find_if(f.stages.begin(), f.stages.end(), [&](const Stage& x) { return x.name == stage; });
  f.stages.insert(at, r.partial_stage);
}

}  // namespace ekb::lower
