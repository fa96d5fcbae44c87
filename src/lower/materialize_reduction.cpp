#include "lower/materialize_reduction.h"

#include "lir/mutator.h"

namespace ekb::lower {

using namespace lir;

namespace {

// Whether `target` is reached from s through declarations, lets and blocks only (no loop or
// condition in between: the reduction runs exactly once per element of the stage).
bool straight_path(const Stmt& s, const Stmt* target) {
  if (&s == target) return true;
  switch (s.kind) {
    case StmtKind::DeclareVar:
    case StmtKind::LetStmt:
      return straight_path(*s.body, target);
    case StmtKind::Block:
      for (const StmtP& b : s.stmts)
        if (straight_path(*b, target)) return true;
      return false;
    default:
      return false;
  }
}

// The accumulator declaration that lower_reductions made for the reduction whose loops include
// `var`: `var acc = identity { for k ... ; rest }` (a split reduction moves as a whole).
const Stmt* accumulator_of(const Stmt& s, const std::string& var) {
  const Stmt* found = nullptr;
  for_each_stmt(s, [&](const Stmt& x) {
    if (found || x.kind != StmtKind::DeclareVar || x.body->kind != StmtKind::Block) return;
    const StmtP& first = x.body->stmts.front();
    if (first->kind == StmtKind::For && find_loop(*first, var)) found = &x;
  });
  return found;
}

// The reduction's combining operation: the loop's innermost `acc = acc op value`, or nullptr.
const Expr* combine_of(const Stmt& loop, const std::string& acc) {
  const Expr* op = nullptr;
  for_each_stmt(loop, [&](const Stmt& x) {
    if (x.kind == StmtKind::Assign && x.name == acc && x.value->kind == ExprKind::Binary &&
        x.value->args[0]->kind == ExprKind::Var && x.value->args[0]->name == acc)
      op = x.value.get();
  });
  return op;
}

// The accumulator variable as an element of a buffer: reads load it, assignments store it.
class AccumulatorInMemory : public Mutator {
 public:
  AccumulatorInMemory(std::string acc, std::string buffer, ScalarType type, std::vector<ExprP> indices)
      : acc_(std::move(acc)), buffer_(std::move(buffer)), type_(type), indices_(std::move(indices)) {}
  using Mutator::mutate;
  ExprP mutate(const ExprP& e) override {
    if (e->kind == ExprKind::Var && e->name == acc_) return load(buffer_, type_, indices_);
    return mutate_children(e);
  }
  StmtP mutate(const StmtP& s) override {
    if (s->kind == StmtKind::Assign && s->name == acc_) return make_store(buffer_, indices_, mutate(s->value));
    return mutate_children(s);
  }

 private:
  std::string acc_, buffer_;
  ScalarType type_;
  std::vector<ExprP> indices_;
};

// s with the node `target` replaced by `with`.
class ReplaceNode : public Mutator {
 public:
  ReplaceNode(const Stmt* target, StmtP with) : target_(target), with_(std::move(with)) {}
  using Mutator::mutate;
  ExprP mutate(const ExprP& e) override { return e; }
  StmtP mutate(const StmtP& s) override { return s.get() == target_ ? with_ : mutate_children(s); }

 private:
  const Stmt* target_;
  StmtP with_;
};

}  // namespace

StmtP materialize_reduction(Func& f, Stage& st, const LoopChain& chain, const std::string& var) {
  // The accumulation nest adds into memory: an iteration that runs twice would add twice.
  for (const StageLoop& l : st.loops)
    if (l.recomputes)
      throw ScheduleError("the reduction loop '" + var + "' of stage '" + st.name +
                              "' cannot leave its statement: loop '" + l.name +
                              "' recomputes some iterations (tail=shift_inwards), which would accumulate twice",
                          "split with tail=guard or tail=peel");
  const Stmt* decl = accumulator_of(*chain.body, var);
  if (!decl || !straight_path(*chain.body, decl)) {
    const Stmt* loop = find_loop(*chain.body, var);
    std::string why = decl   ? "it is nested in another reduction's loop"
                      : loop ? "it is evaluated only under a condition (a select branch or an && / || operand)"
                             : "it is not a loop of this nest";
    throw ScheduleError("the reduction loop '" + var + "' of stage '" + st.name + "' cannot leave its statement: " + why);
  }
  const std::string& acc = decl->name;
  const StmtP& loop = decl->body->stmts.front();
  const Expr* combine = combine_of(*loop, acc);
  if (!combine)
    throw ScheduleError("the reduction loop '" + var + "' of stage '" + st.name +
                        "' keeps the first extreme index (argmax/argmin), so it must stay innermost");
  std::vector<StmtP> rest_stmts(decl->body->stmts.begin() + 1, decl->body->stmts.end());
  StmtP rest = make_block(rest_stmts);

  // The element the accumulator belongs to: where the statement stores into the stage's tensor.
  const Stmt* store = nullptr;
  for_each_stmt(*rest, [&](const Stmt& x) {
    if (x.kind == StmtKind::Store && x.name == st.tensor) store = &x;
  });
  if (!store) throw ScheduleError("stage '" + st.name + "' stores its tensor before its reduction over '" + var + "'");
  const Buffer& out = *f.buffer(st.tensor);

  // C itself accumulates when the statement is `C = acc` or `C = x + acc` of a sum.
  ExprP init = decl->value;
  bool in_place = false;
  if (decl == chain.body.get() && rest.get() == store && out.type == decl->type && !ir::is_half(out.type)) {
    const Expr& v = *store->value;
    auto is_acc = [&](const ExprP& e) { return e->kind == ExprKind::Var && e->name == acc; };
    if (is_acc(store->value)) {
      in_place = true;
    } else if (v.kind == ExprKind::Binary && v.bin_op == BinOp::Add && combine->bin_op == BinOp::Add) {
      for (int side = 0; side < 2 && !in_place; ++side)
        if (is_acc(v.args[side]) && !uses_var(*v.args[1 - side], acc)) {
          in_place = true;
          init = v.args[1 - side];
        }
    }
  }
  std::string buffer = st.tensor;
  if (!in_place) {
    buffer = f.fresh_name(st.tensor + "_acc");
    Buffer b{buffer, decl->type, out.shape, BufferRole::Temp};
    f.buffers.push_back(b);
  }
  AccumulatorInMemory in_memory(acc, buffer, decl->type, store->indices);

  std::vector<StmtP> nests;
  nests.push_back(fresh_copy(f, chain, make_store(buffer, store->indices, init)).build());
  nests.push_back(fresh_copy(f, chain, in_memory.mutate(loop)).build());
  if (!in_place) {
    LoopChain finish = chain;
    finish.body = ReplaceNode(decl, in_memory.mutate(rest)).mutate(chain.body);
    nests.push_back(finish.build());
    // Scoped to the nests: plan_storage places it like any temp.
    return make_allocate(buffer, decl->type, f.buffer(buffer)->num_elements(), MemoryScope::Global, make_block(nests));
  }
  return make_block(nests);
}

}  // namespace ekb::lower
