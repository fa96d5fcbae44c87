#include "lower/region.h"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <set>

#include "lir/mutator.h"
#include "lir/simplify.h"
#include "lower/lower_boundaries.h"
#include "lower/schedule_error.h"

namespace ekb::lower {

using namespace lir;

namespace {

// sum(coefficient * term) + constant; terms are keyed by their text.
struct Affine {
  std::map<std::string, std::pair<ExprP, int64_t>> terms;
  int64_t constant = 0;

  void add(const Affine& o, int64_t scale) {
    constant += scale * o.constant;
    for (const auto& [key, t] : o.terms) {
      auto& slot = terms.try_emplace(key, t.first, 0).first->second;
      slot.second += scale * t.second;
      if (slot.second == 0) terms.erase(key);
    }
  }
  bool same_terms(const Affine& o) const {
    if (terms.size() != o.terms.size()) return false;
    for (const auto& [key, t] : terms) {
      auto it = o.terms.find(key);
      if (it == o.terms.end() || it->second.second != t.second) return false;
    }
    return true;
  }
  ExprP expr() const {
    ExprP e;
    for (const auto& [key, t] : terms) {
      ExprP term = t.second == 1 ? t.first : binary(BinOp::Mul, t.first, index_imm(t.second));
      e = e ? binary(BinOp::Add, e, term) : term;
    }
    if (!e) return index_imm(constant);
    return constant == 0 ? e : binary(BinOp::Add, e, index_imm(constant));
  }
};

bool uses_any(const Expr& e, const std::set<std::string>& names) {
  bool found = false;
  for_each_expr(e, [&](const Expr& x) { found |= x.kind == ExprKind::Var && names.count(x.name); });
  return found;
}

// e as an affine form; variables in `inner` are terms of their own, subexpressions free of them
// opaque terms. nullopt when e is not affine in the inner variables.
std::optional<Affine> affine(const ExprP& e, const std::set<std::string>& inner) {
  Affine a;
  if (e->kind == ExprKind::IntImm) {
    a.constant = e->int_value;
    return a;
  }
  bool is_inner = uses_any(*e, inner);
  if (e->kind == ExprKind::Binary && e->type == ScalarType::Index &&
      (e->bin_op == BinOp::Add || e->bin_op == BinOp::Sub || e->bin_op == BinOp::Mul)) {
    auto x = affine(e->args[0], inner), y = affine(e->args[1], inner);
    if (x && y && e->bin_op != BinOp::Mul) {
      x->add(*y, e->bin_op == BinOp::Add ? 1 : -1);
      return x;
    }
    const Affine* scaled = !x || !y ? nullptr : x->terms.empty() ? &*y : y->terms.empty() ? &*x : nullptr;
    if (scaled) {
      a.add(*scaled, x->terms.empty() ? x->constant : y->constant);
      return a;
    }
  }
  if (is_inner && e->kind != ExprKind::Var) return std::nullopt;
  a.terms[e->kind == ExprKind::Var ? e->name : to_string(*e)] = {e, 1};
  return a;
}

// A variable bound between the scope and an access: a loop (min, extent), a let (value) or a
// mutable scalar (neither).
struct Binder {
  std::string name;
  ExprP min, extent, let_value;
};

// The per-dimension bounds of every access met, as affine forms (nullopt: the whole dimension).
struct DimBounds {
  std::vector<Affine> lo, hi;
  bool whole = false;
};

class FootprintWalker {
 public:
  FootprintWalker(const std::string& buffer, AccessKind kind, size_t rank)
      : buffer_(buffer), kind_(kind), dims_(rank) {}

  void stmt(const Stmt& s) {
    switch (s.kind) {
      case StmtKind::For:
        expr(*s.min);
        expr(*s.extent);
        push({s.name, s.min, s.extent, nullptr}, *s.body);
        return;
      case StmtKind::LetStmt:
        expr(*s.value);
        push({s.name, nullptr, nullptr, s.value}, *s.body);
        return;
      case StmtKind::DeclareVar:
        expr(*s.value);
        push({s.name, nullptr, nullptr, nullptr}, *s.body);
        return;
      case StmtKind::Store:
        for (const ExprP& i : s.indices) expr(*i);
        expr(*s.value);
        if (s.name == buffer_ && kind_ != AccessKind::Loads) access(s.indices);
        return;
      case StmtKind::Assign:
        expr(*s.value);
        return;
      case StmtKind::Block:
        for (const StmtP& b : s.stmts) stmt(*b);
        return;
      case StmtKind::IfThenElse:
        expr(*s.value);
        stmt(*s.body);
        if (s.else_body) stmt(*s.else_body);
        return;
      case StmtKind::Allocate:
      case StmtKind::Kernel:
        stmt(*s.body);
        return;
      case StmtKind::Barrier:
      case StmtKind::Prefetch:
      case StmtKind::ThreadAllReduce:
        return;
    }
  }

  bool found() const { return found_; }
  const std::vector<DimBounds>& dims() const { return dims_; }

 private:
  void push(Binder b, const Stmt& body) {
    binders_.push_back(std::move(b));
    stmt(body);
    binders_.pop_back();
  }

  void expr(const Expr& e) {
    if (kind_ == AccessKind::Stores) return;
    for_each_expr(e, [&](const Expr& x) {
      if (x.kind == ExprKind::Load && x.name == buffer_) access(x.args);
    });
  }

  // Lets substituted (innermost first: a let's value may use outer ones), leaving loop variables.
  ExprP without_lets(ExprP e, size_t below) const {
    for (size_t k = below; k-- > 0;)
      if (binders_[k].let_value) e = substitute(e, binders_[k].name, binders_[k].let_value);
    return e;
  }

  // The smallest (or largest) value of e over the loops between the scope and the access.
  std::optional<Affine> extreme(const ExprP& index, bool largest) const {
    std::set<std::string> inner;
    for (const Binder& b : binders_) inner.insert(b.name);
    auto form = affine(without_lets(index, binders_.size()), inner);
    for (size_t k = binders_.size(); form && k-- > 0;) {
      const Binder& b = binders_[k];
      auto term = form->terms.find(b.name);
      if (term == form->terms.end()) continue;
      if (!b.extent) return std::nullopt;  // a mutable scalar, or a let that stayed
      ExprP extent = simplify(without_lets(b.extent, k));
      auto first = affine(without_lets(b.min, k), inner);
      if (!first) return std::nullopt;
      // A constant extent, or a constant bound of it: a loop over a guarded tail's box runs
      // [lo, +(min(lo, last) - lo) + 1), at most once (the box then covers what it may read).
      int64_t iterations = 0;
      if (extent->kind == ExprKind::IntImm) {
        iterations = extent->int_value;
      } else {
        IntInterval r = value_range(extent, {});
        if (r.hi > (int64_t{1} << 40)) return std::nullopt;
        iterations = std::max<int64_t>(r.hi, 1);
      }
      int64_t c = term->second.second;
      form->terms.erase(term);
      // The first iteration where the coefficient's sign makes it the extreme, else the last.
      if ((c > 0) == largest) first->constant += iterations - 1;
      form->add(*first, c);
    }
    return form;
  }

  void access(const std::vector<ExprP>& indices) {
    found_ = true;
    for (size_t d = 0; d < dims_.size() && d < indices.size(); ++d) {
      auto lo = extreme(indices[d], false), hi = extreme(indices[d], true);
      if (!lo || !hi) {
        dims_[d].whole = true;
        continue;
      }
      dims_[d].lo.push_back(*lo);
      dims_[d].hi.push_back(*hi);
    }
  }

  const std::string& buffer_;
  AccessKind kind_;
  std::vector<DimBounds> dims_;
  std::vector<Binder> binders_;
  bool found_ = false;
};

// The bound of several forms: min (or max) of their expressions; constant-apart forms merged.
std::vector<Affine> merged(const std::vector<Affine>& forms, bool largest) {
  std::vector<Affine> out;
  for (const Affine& a : forms) {
    auto same = std::find_if(out.begin(), out.end(), [&](const Affine& o) { return o.same_terms(a); });
    if (same == out.end()) out.push_back(a);
    else same->constant = largest ? std::max(same->constant, a.constant) : std::min(same->constant, a.constant);
  }
  return out;
}

ExprP combine(const std::vector<Affine>& forms, BinOp op) {
  ExprP e;
  for (const Affine& a : forms) e = e ? binary(op, e, a.expr()) : a.expr();
  return e;
}

class AccessRedirect : public Mutator {
 public:
  AccessRedirect(const std::string& from, const std::string& to, const IndexMap& index)
      : from_(from), to_(to), index_(index) {}
  using Mutator::mutate;
  ExprP mutate(const ExprP& e) override {
    ExprP m = mutate_children(e);
    if (m->kind != ExprKind::Load || m->name != from_) return m;
    auto n = std::make_shared<Expr>(*with_args(*m, index_(m->args)));
    n->name = to_;
    return n;
  }
  StmtP mutate(const StmtP& s) override {
    StmtP m = mutate_children(s);
    if (m->kind != StmtKind::Store || m->name != from_) return m;
    auto n = std::make_shared<Stmt>(*m);
    n->name = to_;
    n->indices = index_(m->indices);
    return n;
  }

 private:
  const std::string &from_, &to_;
  const IndexMap& index_;
};

class BoundaryReadLowerer : public Mutator {
 public:
  BoundaryReadLowerer(const Buffer& b) : b_(b) {}
  using Mutator::mutate;
  ExprP mutate(const ExprP& e) override {
    ExprP m = mutate_children(e);
    if (m->kind != ExprKind::Load || m->name != b_.name || m->boundary == ir::Boundary::None) return m;
    return lower_boundary(*m, b_);
  }

 private:
  const Buffer& b_;
};

}  // namespace

int64_t Box::num_elements() const {
  int64_t n = 1;
  for (int64_t s : size) n *= s;
  return n;
}

std::optional<Box> footprint(const Func& f, const Stmt& scope, const std::string& buffer, AccessKind kind) {
  const Buffer* b = f.buffer(buffer);
  if (!b) throw ScheduleError("there is no buffer '" + buffer + "'");
  FootprintWalker w(buffer, kind, b->shape.size());
  w.stmt(scope);
  if (!w.found()) return std::nullopt;
  Box box;
  for (size_t d = 0; d < b->shape.size(); ++d) {
    const DimBounds& db = w.dims()[d];
    int64_t n = b->shape[d];
    if (db.whole) {
      box.min.push_back(index_imm(0));
      box.extent.push_back(index_imm(n));
      box.size.push_back(n);
      continue;
    }
    std::vector<Affine> lo = merged(db.lo, false), hi = merged(db.hi, true);
    ExprP first = simplify(binary(BinOp::Max, combine(lo, BinOp::Min), index_imm(0)));
    ExprP last = binary(BinOp::Min, combine(hi, BinOp::Max), index_imm(n - 1));
    box.min.push_back(first);
    box.extent.push_back(simplify(binary(BinOp::Add, binary(BinOp::Sub, last, first), index_imm(1))));
    // A constant size when the bounds are constant apart; else the whole dimension.
    int64_t size = n;
    if (lo.size() == 1 && hi.size() == 1 && lo[0].same_terms(hi[0]))
      size = std::clamp<int64_t>(hi[0].constant - lo[0].constant + 1, 1, n);
    box.size.push_back(size);
  }
  return box;
}

std::map<std::string, IntInterval> loop_ranges(const Stmt& root) {
  std::map<std::string, IntInterval> ranges;
  std::set<std::string> unknown;
  for_each_stmt(root, [&](const Stmt& s) {
    if (s.kind != StmtKind::For) return;
    ExprP min = simplify(s.min), extent = simplify(s.extent);  // (2 - -1) is 3
    if (min->kind != ExprKind::IntImm || extent->kind != ExprKind::IntImm || extent->int_value <= 0) {
      unknown.insert(s.name);
      return;
    }
    IntInterval r{min->int_value, min->int_value + extent->int_value - 1};
    auto [it, fresh] = ranges.emplace(s.name, r);
    if (!fresh) it->second = hull(it->second, r);
  });
  for (const std::string& n : unknown) ranges.erase(n);
  return ranges;
}

bool iterations_store_apart(const Func& f, const Stmt& loop, const std::string& buffer) {
  const Buffer* b = f.buffer(buffer);
  if (!b) throw ScheduleError("there is no buffer '" + buffer + "'");
  // The loop's variable is outside the walked body, so it stays a term of the bounds.
  FootprintWalker w(buffer, AccessKind::Stores, b->shape.size());
  w.stmt(*loop.body);
  if (!w.found()) return true;
  for (const DimBounds& db : w.dims()) {
    if (db.whole) continue;
    std::vector<Affine> lo = merged(db.lo, false), hi = merged(db.hi, true);
    if (lo.size() != 1 || hi.size() != 1 || !lo[0].same_terms(hi[0])) continue;
    auto step = lo[0].terms.find(loop.name);
    if (step == lo[0].terms.end()) continue;
    bool elsewhere = false;  // v inside an opaque term (v / 2) breaks the c * v + r form
    for (const auto& [key, term] : lo[0].terms) elsewhere |= key != loop.name && uses_var(*term.first, loop.name);
    if (!elsewhere && hi[0].constant - lo[0].constant < std::abs(step->second.second)) return true;
  }
  return false;
}

bool stores_cover_box(const Stmt& scope, const std::string& buffer) {
  struct Loop {
    std::string var;
    ExprP extent;
  };
  std::vector<Loop> loops;                  // enclosing the statement being walked
  std::vector<std::pair<std::string, ExprP>> lets;
  std::set<std::string> inner;              // variables bound inside scope
  const Stmt* store = nullptr;
  bool ok = true;
  std::function<void(const Stmt&)> walk = [&](const Stmt& s) {
    switch (s.kind) {
      case StmtKind::For:
        inner.insert(s.name);
        loops.push_back({s.name, s.extent});
        walk(*s.body);
        loops.pop_back();
        return;
      case StmtKind::LetStmt:
        inner.insert(s.name);
        lets.emplace_back(s.name, s.value);
        walk(*s.body);
        lets.pop_back();
        return;
      case StmtKind::DeclareVar:
        inner.insert(s.name);
        walk(*s.body);
        return;
      case StmtKind::Block:
        for (const StmtP& x : s.stmts) walk(*x);
        return;
      case StmtKind::IfThenElse:
        walk(*s.body);
        if (s.else_body) walk(*s.else_body);
        return;
      case StmtKind::Allocate:
        walk(*s.body);
        return;
      case StmtKind::Store: {
        if (s.name != buffer) return;
        if (store) {
          ok = false;  // two stores: their boxes' union need not be a box
          return;
        }
        store = &s;
        std::set<std::string> used;  // a loop stepping two dimensions writes a diagonal
        for (ExprP index : s.indices) {
          for (auto it = lets.rbegin(); it != lets.rend(); ++it) index = substitute(index, it->first, it->second);
          auto form = affine(index, inner);
          if (!form) {
            ok = false;
            return;
          }
          std::vector<std::pair<int64_t, int64_t>> steps;  // (|stride|, trip count)
          for (const auto& [key, term] : form->terms) {
            auto l = std::find_if(loops.begin(), loops.end(), [&](const Loop& x) { return x.var == key; });
            if (l == loops.end()) {
              ok &= !uses_any(*term.first, inner);  // anything else must be fixed in the scope
              continue;
            }
            ExprP n = simplify(l->extent);
            if (n->kind != ExprKind::IntImm || !used.insert(key).second) {
              ok = false;
              return;
            }
            steps.emplace_back(std::abs(term.second), n->int_value);
          }
          std::sort(steps.begin(), steps.end());
          int64_t next = 1;
          for (const auto& [stride, count] : steps) {
            if (count > 1 && stride != next) ok = false;
            next *= std::max<int64_t>(count, 1);
          }
        }
        return;
      }
      default:
        return;
    }
  };
  walk(scope);
  return ok && store;
}

bool same_box(const Box& a, const Box& b) {
  if (a.min.size() != b.min.size()) return false;
  for (size_t d = 0; d < a.min.size(); ++d)
    if (!equal(a.min[d], b.min[d]) || !equal(a.extent[d], b.extent[d])) return false;
  return true;
}

StmtP lower_boundary_reads(const Func& f, const StmtP& s, const std::string& buffer) {
  BoundaryReadLowerer l(*f.buffer(buffer));
  return l.mutate(s);
}

StmtP redirect_accesses(const StmtP& s, const std::string& from, const std::string& to, const IndexMap& index) {
  AccessRedirect r(from, to, index);
  return r.mutate(s);
}

IndexMap relative_to(std::vector<ExprP> origin) {
  return [origin = std::move(origin)](const std::vector<ExprP>& indices) {
    std::vector<ExprP> out;
    for (size_t d = 0; d < indices.size(); ++d) out.push_back(binary(BinOp::Sub, indices[d], origin[d]));
    return out;
  };
}

StmtP nest_over(Func& f, const std::vector<ExprP>& min, const std::vector<ExprP>& extent, const std::string& base,
                const std::function<StmtP(const std::vector<ExprP>&)>& body) {
  std::vector<std::string> vars;
  std::vector<ExprP> indices;
  for (size_t d = 0; d < min.size(); ++d) {
    vars.push_back(f.fresh_name(base + std::to_string(d)));
    indices.push_back(var(vars.back(), ScalarType::Index));
  }
  StmtP s = body(indices);
  for (size_t d = min.size(); d-- > 0;) s = make_for(vars[d], min[d], extent[d], s);
  return s;
}

StmtP bind_box(Func& f, Box& box, const std::string& base, const std::function<StmtP()>& body) {
  std::vector<std::pair<std::string, ExprP>> lets;
  auto bind = [&](ExprP& e, const std::string& what, size_t d) {
    if (e->kind == ExprKind::IntImm) return;
    std::string n = f.fresh_name(base + "_" + what + std::to_string(d));
    lets.emplace_back(n, e);
    e = var(n, ScalarType::Index);
  };
  for (size_t d = 0; d < box.min.size(); ++d) {
    bind(box.min[d], "min", d);
    bind(box.extent[d], "extent", d);
  }
  StmtP s = body();
  for (auto it = lets.rbegin(); it != lets.rend(); ++it) s = make_let(it->first, it->second, s);
  return s;
}

std::vector<const Stmt*> loops_of(const Stmt& root, const std::vector<std::string>& vars) {
  std::vector<const Stmt*> out;
  for_each_stmt(root, [&](const Stmt& s) {
    if (s.kind == StmtKind::For && std::find(vars.begin(), vars.end(), s.name) != vars.end()) out.push_back(&s);
  });
  return out;
}

bool in_parallel_loop(const Stmt& root, const std::string& var) {
  bool found = false;
  std::function<void(const Stmt&, bool)> walk = [&](const Stmt& s, bool parallel) {
    if (s.kind == StmtKind::For) {
      parallel |= s.for_kind == ForKind::Parallel || s.for_kind == ForKind::GpuBlock ||
                  s.for_kind == ForKind::GpuThread;
      found |= parallel && s.name == var;
    }
    for (const StmtP& c : {s.body, s.else_body})
      if (c) walk(*c, parallel);
    for (const StmtP& c : s.stmts) walk(*c, parallel);
  };
  walk(root, false);
  return found;
}

int count_accesses(const Stmt& s, const std::string& buffer, AccessKind kind) {
  int n = 0;
  if (kind != AccessKind::Stores)
    for_each_expr(s, [&](const Expr& e) { n += e.kind == ExprKind::Load && e.name == buffer; });
  if (kind != AccessKind::Loads)
    for_each_stmt(s, [&](const Stmt& x) { n += x.kind == StmtKind::Store && x.name == buffer; });
  return n;
}

std::vector<std::string> buffers_written(const Stmt& s) {
  std::set<std::string> out;
  for_each_stmt(s, [&](const Stmt& x) {
    if (x.kind == StmtKind::Store) out.insert(x.name);
  });
  return {out.begin(), out.end()};
}

std::vector<std::string> buffers_read(const Stmt& s) {
  std::set<std::string> out;
  for_each_expr(s, [&](const Expr& e) {
    if (e.kind == ExprKind::Load) out.insert(e.name);
  });
  return {out.begin(), out.end()};
}

StmtP TopLevel::build() const {
  StmtP s = make_block(stmts);
  for (auto it = allocations.rbegin(); it != allocations.rend(); ++it) {
    auto a = std::make_shared<Stmt>(**it);
    a->body = s;
    s = a;
  }
  return s;
}

int TopLevel::index_of_loop(const std::string& var) const {
  for (size_t i = 0; i < stmts.size(); ++i)
    if (find_loop(*stmts[i], var)) return static_cast<int>(i);
  return -1;
}

int TopLevel::producer_of(const std::string& buffer, const std::string& directive) const {
  int found = -1;
  for (size_t i = 0; i < stmts.size(); ++i) {
    if (count_accesses(*stmts[i], buffer, AccessKind::Stores) == 0) continue;
    if (found >= 0)
      throw ScheduleError("'" + buffer + "' is computed by more than one loop nest",
                          directive + " moves one loop nest; place '" + buffer + "' before directives that split it");
    found = static_cast<int>(i);
  }
  if (found < 0) throw ScheduleError("'" + buffer + "' is not computed at root any more");
  return found;
}

void TopLevel::drop_allocation(const std::string& buffer) {
  std::erase_if(allocations, [&](const StmtP& a) { return a->name == buffer; });
}

TopLevel top_level(const Func& f) {
  TopLevel t;
  StmtP s = f.body;
  while (s->kind == StmtKind::Allocate) {
    t.allocations.push_back(s);
    s = s->body;
  }
  if (s->kind == StmtKind::Block) t.stmts = s->stmts;
  else t.stmts = {s};
  return t;
}

}  // namespace ekb::lower
