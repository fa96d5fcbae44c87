#include "lower/schedule_loops.h"

#include <map>
#include <set>

#include "lir/mutator.h"
#include "lir/simplify.h"
#include "lower/region.h"

namespace ekb::lower {

using namespace lir;

namespace {

std::string join_names(const std::vector<std::string>& xs) {
  std::string out;
  for (size_t i = 0; i < xs.size(); ++i) out += (i ? ", " : "") + xs[i];
  return out;
}

std::string access_text(const std::string& buffer, const std::vector<ExprP>& indices) {
  std::string out = buffer + "[";
  for (size_t i = 0; i < indices.size(); ++i) out += (i ? ", " : "") + to_string(*indices[i]);
  return out + "]";
}

bool same_indices(const std::vector<ExprP>& a, const std::vector<ExprP>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (!equal(a[i], b[i])) return false;
  return true;
}

// The loop's variable and every variable bound in its body: what changes between iterations.
std::set<std::string> bound_inside(const Stmt& loop) {
  std::set<std::string> vars = {loop.name};
  for_each_stmt(*loop.body, [&](const Stmt& x) {
    if (x.kind == StmtKind::For || x.kind == StmtKind::LetStmt || x.kind == StmtKind::DeclareVar) vars.insert(x.name);
  });
  return vars;
}

bool uses_any(const Expr& e, const std::set<std::string>& vars) {
  bool found = false;
  for_each_expr(e, [&](const Expr& x) { found |= x.kind == ExprKind::Var && vars.count(x.name); });
  return found;
}

// e as base + constant (base nullptr for a constant): t - 1 is (t, -1).
std::pair<ExprP, int64_t> base_and_offset(const ExprP& e) {
  if (e->kind == ExprKind::IntImm) return {nullptr, e->int_value};
  if (e->kind == ExprKind::Binary && (e->bin_op == BinOp::Add || e->bin_op == BinOp::Sub) &&
      e->args[1]->kind == ExprKind::IntImm) {
    auto [b, c] = base_and_offset(e->args[0]);
    int64_t k = e->args[1]->int_value;
    return {b, e->bin_op == BinOp::Add ? c + k : c - k};
  }
  return {e, 0};
}

// Whether a read at `read` can never see an element the loop writes at `write`: in some dimension
// the written index is the same in every iteration and the read index differs from it by a
// nonzero constant (y[t, n] written, y[t - 1, n] read, within one t).
bool never_written(const std::vector<ExprP>& write, const std::vector<ExprP>& read, const std::set<std::string>& varying) {
  for (size_t d = 0; d < write.size() && d < read.size(); ++d) {
    if (uses_any(*write[d], varying) || uses_any(*read[d], varying)) continue;
    auto [wb, wc] = base_and_offset(write[d]);
    auto [rb, rc] = base_and_offset(read[d]);
    if (wc != rc && ((!wb && !rb) || (wb && rb && equal(wb, rb)))) return true;
  }
  return false;
}

// Buffers allocated inside the loop's body: every iteration has its own (per-thread in a parallel
// loop, which limits their size), so they carry nothing from one iteration to another.
std::set<std::string> private_buffers(const Stmt& loop) {
  std::set<std::string> names;
  for_each_stmt(*loop.body, [&](const Stmt& x) {
    if (x.kind == StmtKind::Allocate && x.extent->kind == ExprKind::IntImm &&
        x.extent->int_value * ir::byte_size(x.type) <= kMaxPrivateBytes)
      names.insert(x.name);
  });
  return names;
}

class LoopRewriter : public Mutator {
 public:
  LoopRewriter(const std::vector<std::string>& vars, const std::function<StmtP(const Stmt&)>& rewrite)
      : vars_(vars.begin(), vars.end()), rewrite_(rewrite) {}
  using Mutator::mutate;
  ExprP mutate(const ExprP& e) override { return e; }
  StmtP mutate(const StmtP& s) override {
    if (s->kind == StmtKind::For && vars_.count(s->name)) return rewrite_(*s);
    return mutate_children(s);
  }

 private:
  std::set<std::string> vars_;
  const std::function<StmtP(const Stmt&)>& rewrite_;
};

}  // namespace

std::vector<std::string> outer_scalars_assigned(const Stmt& s) {
  std::set<std::string> declared;
  std::vector<std::string> assigned;
  for_each_stmt(s, [&](const Stmt& x) {
    if (x.kind == StmtKind::DeclareVar) declared.insert(x.name);
  });
  for_each_stmt(s, [&](const Stmt& x) {
    if (x.kind == StmtKind::Assign && !declared.count(x.name)) assigned.push_back(x.name);
  });
  return assigned;
}

std::set<std::string> allocated_under(const Stmt& s) {
  std::set<std::string> names;
  for_each_stmt(s, [&](const Stmt& x) {
    if (x.kind == StmtKind::Allocate) names.insert(x.name);
  });
  return names;
}

Stage& stage_named(Func& f, const std::string& name) {
  if (Stage* s = f.stage(name)) return *s;
  std::vector<std::string> names;
  for (const Stage& s : f.stages) names.push_back(s.name);
  throw ScheduleError("there is no stage '" + name + "'", "the stages are " + join_names(names));
}

StageLoop& loop_named(Stage& s, const std::string& name) {
  if (StageLoop* l = s.loop(name)) return *l;
  std::vector<std::string> names;
  for (const StageLoop& l : s.loops) names.push_back(l.name);
  throw ScheduleError("stage '" + s.name + "' has no loop '" + name + "'", "its loops are " + join_names(names));
}

StmtP rewrite_loops(const StmtP& s, const std::vector<std::string>& vars,
                    const std::function<StmtP(const Stmt&)>& rewrite) {
  LoopRewriter r(vars, rewrite);
  return r.mutate(s);
}

StmtP with_body(const Stmt& loop, StmtP body) {
  auto n = std::make_shared<Stmt>(loop);
  n->body = std::move(body);
  return n;
}

int LoopChain::position(const std::string& var) const {
  for (size_t i = 0; i < loops.size(); ++i)
    if (loops[i]->name == var) return static_cast<int>(i);
  return -1;
}

StmtP LoopChain::build() const {
  StmtP s = body;
  if (ExprP c = conjunction(guards)) s = make_if(c, s);
  for (auto it = loops.rbegin(); it != loops.rend(); ++it) s = with_body(**it, s);
  return s;
}

LoopChain loop_chain(const StmtP& top) {
  LoopChain c;
  StmtP s = top;
  while (s->kind == StmtKind::For) {
    c.loops.push_back(s);
    s = s->body;
    // A loop's whole body under a condition: the guard of a split, which moves inward.
    while (s->kind == StmtKind::IfThenElse && !s->else_body) {
      c.guards.push_back(s->value);
      s = s->body;
    }
  }
  c.body = s;
  return c;
}

LoopChain fresh_copy(Func& f, const LoopChain& chain, const StmtP& body) {
  LoopChain c;
  c.body = body;
  c.guards = chain.guards;
  std::vector<std::pair<std::string, std::string>> renamed;
  for (const StmtP& l : chain.loops) {
    std::string v = f.fresh_name(l->name);
    renamed.emplace_back(l->name, v);
    for (Stage& st : f.stages)
      if (StageLoop* sl = st.loop_of_var(l->name)) sl->vars.push_back(v);
    auto n = std::make_shared<Stmt>(*l);
    n->name = v;
    c.loops.push_back(n);
  }
  // Bounds of inner loops, guards and the body may use any renamed variable.
  for (const auto& [from, to] : renamed) {
    ExprP v = var(to, ScalarType::Index);
    for (StmtP& l : c.loops) {
      auto n = std::make_shared<Stmt>(*l);
      n->min = substitute(n->min, from, v);
      n->extent = substitute(n->extent, from, v);
      l = n;
    }
    for (ExprP& g : c.guards) g = substitute(g, from, v);
    c.body = substitute(c.body, from, v);
  }
  return c;
}

std::string independence_problem(const Stmt& loop) {
  for (const std::string& v : outer_scalars_assigned(*loop.body))
    return "every iteration updates '" + v + "', an accumulator declared outside the loop";
  // Per buffer written: the first store, then every access must be to that same element.
  std::map<std::string, std::vector<ExprP>> written;
  std::string problem;
  std::set<std::string> own = private_buffers(loop);
  for_each_stmt(*loop.body, [&](const Stmt& x) {
    if (x.kind != StmtKind::Store || !problem.empty() || own.count(x.name)) return;
    auto [it, fresh] = written.emplace(x.name, x.indices);
    if (!fresh && !same_indices(it->second, x.indices))
      problem = "it writes " + access_text(x.name, it->second) + " and " + access_text(x.name, x.indices);
    bool uses = false;
    for (const ExprP& i : x.indices) uses |= uses_var(*i, loop.name);
    if (!uses && problem.empty())
      problem = "every iteration writes the same element " + access_text(x.name, x.indices);
  });
  if (!problem.empty()) return problem;
  std::set<std::string> varying = bound_inside(loop);
  for_each_expr(*loop.body, [&](const Expr& e) {
    if (e.kind != ExprKind::Load || !problem.empty()) return;
    auto it = written.find(e.name);
    if (it != written.end() && !same_indices(it->second, e.args) && !never_written(it->second, e.args, varying))
      problem = "it writes " + access_text(e.name, it->second) + " but reads " + access_text(e.name, e.args) +
                ", which another iteration may write";
  });
  return problem;
}

std::string ordered_independence_problem(const Func& f, const Stmt& loop) {
  std::string why = independence_problem(loop);
  if (!why.empty()) return why;
  std::set<std::string> own = private_buffers(loop);
  for (const std::string& b : buffers_written(*loop.body))
    if (!own.count(b) && !iterations_store_apart(f, loop, b))
      return "different iterations may write the same element of " + b;
  return "";
}

std::string idempotence_problem(const Stmt& loop) {
  for (const std::string& v : outer_scalars_assigned(*loop.body))
    return "it updates '" + v + "', an accumulator declared outside the loop";
  std::set<std::string> written, own = private_buffers(loop);
  for_each_stmt(*loop.body, [&](const Stmt& x) {
    if (x.kind == StmtKind::Store && !own.count(x.name)) written.insert(x.name);
  });
  std::string problem;
  for_each_expr(*loop.body, [&](const Expr& e) {
    if (e.kind == ExprKind::Load && written.count(e.name) && problem.empty())
      problem = "it reads " + e.name + ", which it writes";
  });
  return problem;
}

std::optional<int64_t> constant_extent(const Stmt& loop) {
  ExprP e = simplify(loop.extent);
  if (e->kind == ExprKind::IntImm) return e->int_value;
  return std::nullopt;
}

ExprP conjunction(const std::vector<ExprP>& conditions) {
  ExprP c;
  for (const ExprP& x : conditions) c = c ? binary(BinOp::And, c, x) : x;
  return c;
}

}  // namespace ekb::lower
