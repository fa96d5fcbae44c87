// Cost facts (cost.h). Statements and expressions are turned into a tree of loops, each with the ops
// its body costs per iteration; a loop is iterated only when its body's count depends on its
// variable (through an inner range bound), otherwise its trip count multiplies the body's count.
#include "ir/cost.h"

#include <algorithm>
#include <initializer_list>
#include <set>
#include <stdexcept>
#include <string>
#include <unordered_map>

#include "ir/inputs.h"
#include "ir/interpreter.h"
#include "ir/printer.h"

namespace ekb::ir {

namespace {

struct Ops {
  double f = 0, i = 0, t = 0;
  Ops& operator+=(const Ops& o) {
    f += o.f;
    i += o.i;
    t += o.t;
    return *this;
  }
  Ops operator*(double n) const { return {f * n, i * n, t * n}; }
  bool zero() const { return f == 0 && i == 0; }
};

struct CLoop;
struct CNode {
  Ops fixed;                // per execution, outside any loop
  std::vector<CLoop> loops;
  std::set<int> free;       // variables (ids) the node's count depends on
  bool has_ops = false;
};
struct Bound {
  bool is_const = false;
  int64_t value = 0;
  int handle = -1;
  std::vector<int> ids;  // variable ids, in the order the evaluator takes them
};
struct CLoop {
  int var = -1;
  Bound lo, hi;
  Ops per_iter;  // reductions: the combine op
  CNode body;
  bool body_depends = false;
};

bool has_access(const Expr& e) {
  if (e.kind == ExprKind::Access) return true;
  for (const auto& a : e.args)
    if (has_access(*a)) return true;
  if (e.pad_value && has_access(*e.pad_value)) return true;
  for (const Range& r : e.ranges)
    if (has_access(*r.lo) || has_access(*r.hi)) return true;
  return false;
}

bool bounds_read_data(const Expr& e) {
  for (const Range& r : e.ranges)
    if (has_access(*r.lo) || has_access(*r.hi)) return true;
  for (const auto& a : e.args)
    if (bounds_read_data(*a)) return true;
  if (e.pad_value && bounds_read_data(*e.pad_value)) return true;
  return false;
}

bool bounds_read_data(const Stmt& s) {
  for (const Range& r : s.ranges)
    if (has_access(*r.lo) || has_access(*r.hi)) return true;
  for (const Stmt& b : s.body)
    if (bounds_read_data(b)) return true;
  if (s.value && bounds_read_data(*s.value)) return true;
  for (const auto& ix : s.indices)
    if (bounds_read_data(*ix)) return true;
  return false;
}

bool is_transcendental(const std::string& n) {
  return !(n == "min" || n == "max" || n == "abs" || n == "floor" || n == "ceil" || n == "round" ||
           n == "round_even" || n == "trunc" || n == "fma" || n == "clamp" || n == "select");
}

class Builder {
 public:
  Builder(const Instance& inst, ScalarEvaluator& ev) : inst_(inst), ev_(ev) {}

  CNode statement(const Stmt& s, bool pure);
  int num_vars() const { return nvars_; }

 private:
  ScalarType ty(const Expr& e) const {
    auto it = inst_.expr_types.find(&e);
    if (it != inst_.expr_types.end()) return it->second;
    if (e.kind == ExprKind::FloatLit) return ScalarType::F64;
    if (e.kind == ExprKind::BoolLit) return ScalarType::Bool;
    return ScalarType::Index;
  }
  int find(const std::string& n) const {
    for (auto it = scope_.rbegin(); it != scope_.rend(); ++it)
      if (it->first == n) return it->second;
    return -1;
  }
  int bind(const std::string& n) {
    scope_.emplace_back(n, nvars_);
    return nvars_++;
  }
  void refs(const Expr& e, std::set<int>& out) const {
    if (e.kind == ExprKind::Name) {
      int id = find(e.name);
      if (id >= 0) out.insert(id);
    }
    for (const auto& a : e.args) refs(*a, out);
    if (e.pad_value) refs(*e.pad_value, out);
    for (const Range& r : e.ranges) {
      refs(*r.lo, out);
      refs(*r.hi, out);
    }
  }
  bool constant(const Expr& e) const {
    switch (e.kind) {
      case ExprKind::IntLit: case ExprKind::FloatLit: case ExprKind::BoolLit: return true;
      case ExprKind::Name: return find(e.name) < 0;
      case ExprKind::Access: case ExprKind::Reduce: return false;
      default:
        for (const auto& a : e.args)
          if (!constant(*a)) return false;
        return true;
    }
  }
  bool index_valued(const Expr& e) const {
    ScalarType t = ty(e);
    if (t == ScalarType::Index) return true;
    if (t != ScalarType::Bool) return false;
    if (e.kind == ExprKind::BoolLit) return true;
    if (e.kind == ExprKind::Unary || e.kind == ExprKind::Binary) {
      for (const auto& a : e.args)
        if (!index_valued(*a)) return false;
      return true;
    }
    return false;
  }
  static void add(Ops& o, ScalarType t, double n, bool transcendental = false) {
    if (t == ScalarType::Index) return;
    if (is_float(t)) {
      o.f += n;
      if (transcendental) o.t += n;
    } else {
      o.i += n;
    }
  }
  Bound bound(const Expr& e, std::set<int>& free) {
    Bound b;
    std::set<int> r;
    refs(e, r);
    free.insert(r.begin(), r.end());
    std::vector<std::string> names;
    for (const auto& [n, id] : scope_) {
      names.push_back(n);
      b.ids.push_back(id);
    }
    try {
      b.handle = ev_.compile(e, names);
    } catch (const std::runtime_error& ex) {
      throw std::runtime_error(inst_.full_name() + ": cannot count the cost: a range bound at " +
                               std::to_string(e.loc.line) + ":" + std::to_string(e.loc.col) +
                               " depends on computed data (" + ex.what() + ")");
    }
    return b;
  }
  static Bound const_bound(int64_t v) {
    Bound b;
    b.is_const = true;
    b.value = v;
    return b;
  }
  void expr(const Expr& e, CNode& node);

  // A sum's body as terms (through + and -) of factors (through *), with the factors common to
  // every term that do not depend on `vars` (the sum's own variables) taken out: `rest` holds
  // each term's other factors. Empty `common` when there is none, or when a term would be left
  // with no factor.
  struct Factored {
    std::vector<const Expr*> common;
    std::vector<std::vector<const Expr*>> rest;
  };
  Factored factor_out(const Expr& body, const std::set<int>& vars) const {
    std::vector<const Expr*> terms;
    flatten(body, {BinaryOp::Add, BinaryOp::Sub}, terms);
    std::vector<std::vector<const Expr*>> factors(terms.size());
    for (size_t t = 0; t < terms.size(); ++t) flatten(*terms[t], {BinaryOp::Mul}, factors[t]);
    Factored out;
    out.rest = factors;
    for (const Expr* candidate : factors[0]) {
      if (!invariant(*candidate, vars)) continue;
      const std::string text = print_expr(*candidate);
      std::vector<size_t> at(terms.size());
      bool everywhere = true;
      for (size_t t = 0; t < terms.size() && everywhere; ++t) {
        auto& r = out.rest[t];
        auto it = std::find_if(r.begin(), r.end(), [&](const Expr* x) { return print_expr(*x) == text; });
        everywhere = it != r.end() && r.size() > 1;
        if (everywhere) at[t] = static_cast<size_t>(it - r.begin());
      }
      if (!everywhere) continue;
      for (size_t t = 0; t < terms.size(); ++t) out.rest[t].erase(out.rest[t].begin() + static_cast<std::ptrdiff_t>(at[t]));
      out.common.push_back(candidate);
    }
    return out;
  }
  static void flatten(const Expr& e, std::initializer_list<BinaryOp> ops, std::vector<const Expr*>& out) {
    if (e.kind == ExprKind::Binary && std::find(ops.begin(), ops.end(), e.binary_op) != ops.end()) {
      flatten(*e.args[0], ops, out);
      flatten(*e.args[1], ops, out);
    } else {
      out.push_back(&e);
    }
  }
  bool invariant(const Expr& e, const std::set<int>& vars) const {
    if (e.kind == ExprKind::Reduce) return false;
    std::set<int> used;
    refs(e, used);
    for (int v : used)
      if (vars.count(v)) return false;
    for (const auto& a : e.args)
      if (a && a->kind == ExprKind::Reduce) return false;
    return true;
  }

  const Instance& inst_;
  ScalarEvaluator& ev_;
  std::vector<std::pair<std::string, int>> scope_;
  int nvars_ = 0;
};

// Loops are built innermost-last; `nest` turns a list of loops (outermost first) around `inner`
// into one CLoop tree attached to `node`, computing free sets and flags.
struct LoopSpec {
  int var;
  Bound lo, hi;
  std::set<int> bound_refs;
};

void attach(CNode& node, std::vector<LoopSpec>& specs, CNode inner, Ops combine) {
  // Build from the innermost out.
  CNode body = std::move(inner);
  body.has_ops = body.has_ops || !body.fixed.zero();
  for (size_t k = specs.size(); k-- > 0;) {
    CLoop l;
    l.var = specs[k].var;
    l.lo = std::move(specs[k].lo);
    l.hi = std::move(specs[k].hi);
    if (k + 1 == specs.size()) l.per_iter = combine;
    l.body = std::move(body);
    l.body_depends = l.body.free.count(l.var) > 0;
    CNode outer;
    outer.free = specs[k].bound_refs;
    for (int v : l.body.free)
      if (v != l.var) outer.free.insert(v);
    outer.has_ops = l.body.has_ops || !l.per_iter.zero();
    outer.loops.push_back(std::move(l));
    body = std::move(outer);
  }
  // `body` is now a node holding the outermost loop (or `inner` when there are no loops).
  node.fixed += body.fixed;
  node.free.insert(body.free.begin(), body.free.end());
  node.has_ops = node.has_ops || body.has_ops;
  for (CLoop& l : body.loops) node.loops.push_back(std::move(l));
}

void Builder::expr(const Expr& e, CNode& node) {
  if (constant(e)) return;
  switch (e.kind) {
    case ExprKind::IntLit: case ExprKind::FloatLit: case ExprKind::BoolLit: case ExprKind::Name:
      return;
    case ExprKind::Access:
      for (const auto& a : e.args) expr(*a, node);
      if (e.pad_value) expr(*e.pad_value, node);
      return;
    case ExprKind::Cast: expr(*e.args[0], node); return;
    case ExprKind::Unary:
      expr(*e.args[0], node);
      if (e.unary_op == UnaryOp::Neg) add(node.fixed, ty(e), 1);
      else if (!index_valued(*e.args[0])) add(node.fixed, ScalarType::Bool, 1);
      return;
    case ExprKind::Binary: {
      const Expr& a = *e.args[0];
      const Expr& b = *e.args[1];
      expr(a, node);
      expr(b, node);
      switch (e.binary_op) {
        case BinaryOp::Eq: case BinaryOp::Ne: case BinaryOp::Lt:
        case BinaryOp::Le: case BinaryOp::Gt: case BinaryOp::Ge:
        case BinaryOp::And: case BinaryOp::Or:
          if (is_float(ty(a)) || is_float(ty(b))) add(node.fixed, ScalarType::F64, 1);
          else if (!(index_valued(a) && index_valued(b))) add(node.fixed, ScalarType::Bool, 1);
          return;
        default:
          if (ty(e) == ScalarType::Bool && index_valued(a) && index_valued(b)) return;
          add(node.fixed, ty(e), 1);
          return;
      }
    }
    case ExprKind::Call: {
      for (const auto& a : e.args) expr(*a, node);
      double n = (e.name == "fma" || e.name == "clamp") ? 2 : 1;
      add(node.fixed, ty(e), n, is_transcendental(e.name));
      return;
    }
    case ExprKind::Reduce: {
      size_t mark = scope_.size();
      std::vector<LoopSpec> specs;
      for (const Range& r : e.ranges) {
        LoopSpec s;
        s.lo = bound(*r.lo, s.bound_refs);
        s.hi = bound(*r.hi, s.bound_refs);
        s.var = bind(r.var);
        specs.push_back(std::move(s));
      }
      CNode inner;
      const Expr& body = *e.args[0];
      std::set<int> reduction_vars;
      for (const LoopSpec& s : specs) reduction_vars.insert(s.var);
      const Factored f = e.reduce_op == ReduceOp::Sum ? factor_out(body, reduction_vars) : Factored{};
      if (f.common.empty()) {
        expr(body, inner);
      } else {
        // sum(k: c * x_k + c * y_k) = c * sum(k: x_k + y_k): the common factors and their
        // multiplies once per evaluation of the sum, the rest per point.
        for (const Expr* c : f.common) expr(*c, node);
        add(node.fixed, ty(e), static_cast<double>(f.common.size()));
        for (const auto& term : f.rest) {
          for (const Expr* x : term) expr(*x, inner);
          add(inner.fixed, ty(body), static_cast<double>(term.size() - 1));
        }
        add(inner.fixed, ty(body), static_cast<double>(f.rest.size() - 1));
      }
      Ops combine;
      add(combine, ty(body), 1);
      scope_.resize(mark);
      attach(node, specs, std::move(inner), combine);
      return;
    }
  }
}

CNode Builder::statement(const Stmt& s, bool pure) {
  size_t mark = scope_.size();
  CNode out;
  std::vector<LoopSpec> specs;
  CNode inner;
  if (s.kind == StmtKind::For) {
    for (const Range& r : s.ranges) {
      LoopSpec sp;
      sp.lo = bound(*r.lo, sp.bound_refs);
      sp.hi = bound(*r.hi, sp.bound_refs);
      sp.var = bind(r.var);
      specs.push_back(std::move(sp));
    }
    for (const Stmt& b : s.body) {
      CNode c = statement(b, false);
      inner.fixed += c.fixed;
      inner.free.insert(c.free.begin(), c.free.end());
      inner.has_ops = inner.has_ops || c.has_ops;
      for (CLoop& l : c.loops) inner.loops.push_back(std::move(l));
    }
  } else {
    const TensorInstance* t = inst_.tensor(s.tensor);
    if (!t) throw std::runtime_error(inst_.full_name() + ": unknown tensor '" + s.tensor + "'");
    for (size_t d = 0; d < s.indices.size(); ++d) {
      const Expr& ix = *s.indices[d];
      bool free_var = ix.kind == ExprKind::Name && find(ix.name) < 0 &&
                      !inst_.params.count(ix.name) && !inst_.lets.count(ix.name);
      if (pure || free_var) {
        LoopSpec sp;
        sp.lo = const_bound(0);
        sp.hi = const_bound(t->shape.at(d));
        sp.var = bind(ix.name);
        specs.push_back(std::move(sp));
      }
    }
    for (const auto& ix : s.indices) expr(*ix, inner);
    expr(*s.value, inner);
  }
  scope_.resize(mark);
  attach(out, specs, std::move(inner), Ops{});
  return out;
}

class Counter {
 public:
  Counter(ScalarEvaluator& ev, int nvars) : ev_(ev), env_(static_cast<size_t>(nvars), 0) {}
  Ops count(const CNode& n) {
    Ops o = n.fixed;
    for (const CLoop& l : n.loops) o += count(l);
    return o;
  }

 private:
  int64_t eval(const Bound& b) {
    if (b.is_const) return b.value;
    args_.resize(b.ids.size());
    for (size_t k = 0; k < b.ids.size(); ++k) args_[k] = env_[static_cast<size_t>(b.ids[k])];
    return ev_.eval_int(b.handle, args_.data());
  }
  Ops count(const CLoop& l) {
    if (!l.body.has_ops && l.per_iter.zero()) return {};
    int64_t lo = eval(l.lo), hi = eval(l.hi);
    if (hi <= lo) return {};
    if (!l.body_depends) {
      Ops per = l.per_iter;
      per += count(l.body);
      return per * static_cast<double>(hi - lo);
    }
    Ops o;
    for (int64_t k = lo; k < hi; ++k) {
      env_[static_cast<size_t>(l.var)] = k;
      o += l.per_iter;
      o += count(l.body);
    }
    return o;
  }
  ScalarEvaluator& ev_;
  std::vector<int64_t> env_;
  std::vector<int64_t> args_;
};

}  // namespace

CostFacts compute_cost(const Instance& inst, const std::vector<TensorData>* inputs) {
  CostFacts c;
  for (const TensorInstance& t : inst.tensors) {
    double b = static_cast<double>(t.num_bytes());
    switch (t.decl->role) {
      case TensorRole::Input: c.input_bytes += b; break;
      case TensorRole::Output: c.output_bytes += b; break;
      case TensorRole::Temp: c.temp_bytes += b; break;
    }
  }
  c.min_bytes = c.input_bytes + c.output_bytes;

  const auto& stmts = inst.pattern().stmts;
  std::vector<TensorData> generated;
  for (const Stmt& s : stmts)
    if (bounds_read_data(s)) c.data_dependent = true;
  if (c.data_dependent && !inputs) {
    generated = generate_inputs(inst, 0);
    inputs = &generated;
  }
  ScalarEvaluator ev(inst, c.data_dependent ? inputs : nullptr);
  Builder builder(inst, ev);
  std::vector<CNode> nodes;
  const std::vector<bool> pure = pure_definitions(inst, stmts);
  for (size_t i = 0; i < stmts.size(); ++i) nodes.push_back(builder.statement(stmts[i], pure[i]));
  Counter counter(ev, builder.num_vars());
  Ops total;
  for (const CNode& n : nodes) total += counter.count(n);
  c.flops = total.f;
  c.int_ops = total.i;
  c.transcendentals = total.t;
  return c;
}

}  // namespace ekb::ir
