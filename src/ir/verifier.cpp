// verify_pattern: the checks that need no workload (names, scopes, definition order, reduction
// forms; the layers are checked in layers.cpp), and verify_module, which adds every workload.
#include <algorithm>
#include <array>
#include <set>
#include <tuple>

#include "ir/instance.h"
#include "ir/parser.h"  // is_target_reserved_name
#include "ir/verify_internal.h"

namespace ekb::ir {

namespace {
using namespace detail;

constexpr std::array<std::string_view, 8> kDomains{"nn",       "qnn",   "img",         "audio",
                                                   "linalg",   "robotics", "transformer", "graph"};

enum class GlobalKind : uint8_t { TypeParam, Param, Let, Tensor };
struct Global {
  GlobalKind kind = GlobalKind::Param;
  SourceLoc loc;
  const TensorDecl* tensor = nullptr;
  size_t let_index = 0;
};

std::string kind_text(const Global& g) {
  switch (g.kind) {
    case GlobalKind::TypeParam: return "type parameter";
    case GlobalKind::Param: return "param";
    case GlobalKind::Let: return "let";
    case GlobalKind::Tensor: return std::string(role_name(g.tensor->role));
  }
  return "name";
}

std::string a_kind(const Global& g) {
  std::string k = kind_text(g);
  return (k[0] == 'i' || k[0] == 'o' ? "an " : "a ") + k;
}

// Index variables may not be named like a constant; a tensor or type name in an index position
// is taken as a (shadowing, hence reported) variable.
bool is_constant(const Global& g) { return g.kind == GlobalKind::Param || g.kind == GlobalKind::Let; }

std::string line_text(SourceLoc loc) { return "line " + std::to_string(loc.line); }

// "1 dimension", "2 indices".
std::string dims_text(size_t n, std::string_view what) {
  std::string w(what);
  if (n != 1) w = w == "index" ? "indices" : w + "s";
  return std::to_string(n) + " " + w;
}

// What an expression belongs to: statements may use everything; the constant contexts only
// params, lets and literals.
enum class Ctx : uint8_t { Stmt, Let, Shape, Domain };

class PatternChecker {
 public:
  PatternChecker(const Module& m, Diagnostics& d) : m_(m), p_(m.pattern), diags_(d) {}

  void run() {
    check_header();
    declare_all();
    check_decls();
    for (const Stmt& s : p_.stmts)
      if (s.kind == StmtKind::Assign && !first_top_assign_.count(s.tensor))
        first_top_assign_[s.tensor] = s.loc;
    for (const Stmt& s : p_.stmts) check_stmt(s, true);
    check_tensor_use();
    verify_layers(m_, facts_, diags_);
  }

 private:
  struct ScopeVar {
    std::string name;
    SourceLoc loc;
  };
  struct TensorState {
    bool defined = false;
    bool read = false;
  };

  void error(SourceLoc loc, std::string msg, std::string hint = {}) {
    diags_.error(loc, std::move(msg), std::move(hint));
  }

  // ---- header and declarations ----
  void check_header() {
    size_t dot = p_.name.find('.');
    std::string domain = p_.name.substr(0, dot);
    if (dot == std::string::npos || dot + 1 >= p_.name.size()) {
      error(p_.loc, "pattern name '" + p_.name + "' must be domain.name", "e.g. nn." + p_.name);
    } else if (std::find(kDomains.begin(), kDomains.end(), domain) == kDomains.end()) {
      std::string hint = did_you_mean(domain, {kDomains.begin(), kDomains.end()});
      if (hint.empty())
        hint = "the domains are nn, qnn, img, audio, linalg, robotics, transformer and graph";
      error(p_.loc, "unknown domain '" + domain + "' in pattern name '" + p_.name + "'", hint);
    }
    if (!p_.has_level)
      error(p_.loc, "pattern '" + p_.name + "' has no 'level'",
            "add `level operator` (or fused, graph)");
    if (p_.source.empty())
      error(p_.loc, "pattern '" + p_.name + "' has no 'source'",
            "provenance is mandatory: add `source \"...\"` naming the model, library or standard");
  }

  void declare_all() {
    struct Decl {
      std::string name;
      Global g;
    };
    std::vector<Decl> decls;
    for (const auto& t : p_.type_params) {
      if (parse_scalar_type(t.name) || t.name == "index")
        error(t.loc, "type parameter '" + t.name + "' has the name of a built-in type",
              "choose another name, e.g. T");
      decls.push_back({t.name, {GlobalKind::TypeParam, t.loc}});
    }
    for (const auto& x : p_.params) decls.push_back({x.name, {GlobalKind::Param, x.loc}});
    for (size_t i = 0; i < p_.lets.size(); ++i)
      decls.push_back({p_.lets[i].name, {GlobalKind::Let, p_.lets[i].loc, nullptr, i}});
    for (const auto& t : p_.tensors) decls.push_back({t.name, {GlobalKind::Tensor, t.loc, &t}});
    // Report a duplicate at the later of the two declarations in the text.
    std::stable_sort(decls.begin(), decls.end(), [](const Decl& a, const Decl& b) {
      return std::tie(a.g.loc.line, a.g.loc.col) < std::tie(b.g.loc.line, b.g.loc.col);
    });
    for (const auto& d : decls) {
      check_target_name(d.name, d.g.loc, /*is_global=*/true);
      auto [it, fresh] = globals_.emplace(d.name, d.g);
      if (!fresh)
        error(d.g.loc,
              "'" + d.name + "' is already declared as " + a_kind(it->second) + " at " +
                  line_text(it->second.loc),
              "type parameters, params, lets and tensors need distinct names");
    }
  }

  void check_decls() {
    for (size_t i = 0; i < p_.lets.size(); ++i) {
      let_limit_ = i;
      with_ctx(Ctx::Let, "let '" + p_.lets[i].name + "'", p_.lets[i].value.get());
    }
    for (const auto& t : p_.tensors) {
      check_type_ref(t.type);
      for (const auto& d : t.shape) with_ctx(Ctx::Shape, "the shape of '" + t.name + "'", d.get());
      if (t.domain.kind == DomainKind::Range) {
        with_ctx(Ctx::Domain, "the domain of '" + t.name + "'", t.domain.lo.get());
        with_ctx(Ctx::Domain, "the domain of '" + t.name + "'", t.domain.hi.get());
      }
    }
  }

  void with_ctx(Ctx c, std::string what, const Expr* e) {
    ctx_ = c;
    ctx_what_ = std::move(what);
    check_expr(e);
    ctx_ = Ctx::Stmt;
  }

  void check_type_ref(const TypeRef& t) {
    if (parse_scalar_type(t.name)) return;
    auto g = globals_.find(t.name);
    if (g != globals_.end() && g->second.kind == GlobalKind::TypeParam) return;
    std::vector<std::string> cands = scalar_type_names();
    for (const auto& tp : p_.type_params) cands.push_back(tp.name);
    std::string hint = t.name == "index"
                           ? "the index type is internal; use i64, which mixes with index values"
                           : did_you_mean(t.name, cands);
    if (hint.empty()) hint = "use a scalar type (f32, i8, ...) or declare it with `types " + t.name + "`";
    error(t.loc, "unknown type '" + t.name + "'", hint);
  }

  // ---- scopes ----
  const ScopeVar* lookup_var(const std::string& n) const {
    for (auto it = scope_.rbegin(); it != scope_.rend(); ++it)
      if (it->name == n) return &*it;
    return nullptr;
  }

  // Every name becomes an identifier in the generated kernels, so it must be legal there too.
  void check_target_name(const std::string& name, SourceLoc loc, bool is_global = false) {
    if (is_target_reserved_name(name) || (is_global && is_target_library_name(name)))
      error(loc, "'" + name + "' cannot be used as a name: it is reserved in the generated C/CUDA/OpenCL code",
            "choose another name, e.g. '" + name + "_'");
  }

  void bind_var(const std::string& name, SourceLoc loc) {
    check_target_name(name, loc);
    auto g = globals_.find(name);
    if (g != globals_.end())
      error(loc,
            "index variable '" + name + "' shadows the " + kind_text(g->second) + " '" + name +
                "' declared at " + line_text(g->second.loc),
            "rename the variable");
    else if (const ScopeVar* v = lookup_var(name))
      error(loc, "index variable '" + name + "' is already bound at " + line_text(v->loc),
            "use a different name for the inner variable");
    scope_.push_back({name, loc});
  }

  void check_range(const Range& r) {
    check_expr(r.lo.get());
    check_expr(r.hi.get());
    bind_var(r.var, r.loc);
  }

  // ---- statements ----
  void check_stmt(const Stmt& s, bool top) {
    if (s.kind == StmtKind::For) {
      size_t mark = scope_.size();
      for (const auto& r : s.ranges) check_range(r);
      for (const auto& b : s.body) check_stmt(b, false);
      scope_.resize(mark);
      return;
    }
    check_assign(s, top);
  }

  void check_assign(const Stmt& s, bool top) {
    auto g = globals_.find(s.tensor);
    if (g == globals_.end() || g->second.kind != GlobalKind::Tensor) {
      if (g == globals_.end())
        error(s.loc, "unknown tensor '" + s.tensor + "'", did_you_mean(s.tensor, tensor_names()));
      else
        error(s.loc, "'" + s.tensor + "' is " + a_kind(g->second) + ", not a tensor",
              "only outputs and temps can be assigned");
      check_update(s, nullptr);
      return;
    }
    const TensorDecl& t = *g->second.tensor;
    if (s.indices.size() != t.shape.size())
      error(s.loc, "'" + t.name + "' has " + dims_text(t.shape.size(), "dimension") + " but " +
                       dims_text(s.indices.size(), "index") + (s.indices.size() == 1 ? " is" : " are") +
                       " written");
    if (t.role == TensorRole::Input) {
      error(s.loc, "input '" + t.name + "' cannot be assigned",
            "inputs are read-only; declare '" + t.name + "' as an output or temp");
      check_update(s, nullptr);
      return;
    }
    TensorState& st = tstate_[t.name];
    if (!st.defined) {
      std::string why = pure_problem(s);
      if (!top) {
        error(s.loc, "the first write to '" + t.name + "' is inside a 'for'",
              "give '" + t.name + "' a pure definition first: a top-level assignment such as " +
                  t.name + "[i] = 0, then update it in the loop");
      } else if (!why.empty()) {
        error(s.loc, "the first write to '" + t.name + "' must be its pure definition, but " + why,
              "a pure definition writes every element: " + t.name +
                  "[i, j] = ... with distinct index variables");
      } else {
        check_pure(s, t);
        return;
      }
      st.defined = true;  // report the missing definition once, not at every later read
    }
    check_update(s, &t);
  }

  // Why a first write is not a pure definition ("" when it is one).
  std::string pure_problem(const Stmt& s) {
    for (size_t i = 0; i < s.indices.size(); ++i) {
      const Expr& ix = *s.indices[i];
      std::string at = "index " + std::to_string(i);
      if (ix.kind != ExprKind::Name) return at + " is not a plain variable";
      auto g = globals_.find(ix.name);
      if (g != globals_.end() && is_constant(g->second))
        return at + " ('" + ix.name + "') is " + a_kind(g->second) + ", not an index variable";
      for (size_t j = 0; j < i; ++j)
        if (s.indices[j]->kind == ExprKind::Name && s.indices[j]->name == ix.name)
          return "index variable '" + ix.name + "' is used twice";
    }
    return {};
  }

  void check_pure(const Stmt& s, const TensorDecl& t) {
    size_t mark = scope_.size();
    StageLoops stage{{}, s.loc};
    for (const auto& ix : s.indices) {
      bind_var(ix->name, ix->loc);
      stage.loops.push_back(ix->name);
    }
    defining_ = t.name;
    reduce_sink_ = &stage.loops;
    check_expr(s.value.get());
    reduce_sink_ = nullptr;
    defining_.clear();
    scope_.resize(mark);
    tstate_[t.name].defined = true;
    facts_.pure[t.name] = std::move(stage);
  }

  // An update (or an invalid write, t == nullptr): LHS names bound by nothing are free
  // variables over the tensor's full extent.
  void check_update(const Stmt& s, const TensorDecl* t) {
    size_t mark = scope_.size();
    StageLoops stage{{}, s.loc};
    for (const auto& v : scope_) stage.loops.push_back(v.name);
    std::vector<const Expr*> free, plain;  // plain: every free-variable index, repeats included
    for (const auto& ix : s.indices) {
      if (!ix || ix->kind != ExprKind::Name || lookup_var(ix->name)) continue;
      if (auto g = globals_.find(ix->name); g != globals_.end() && is_constant(g->second)) continue;
      plain.push_back(ix.get());
      bool twice = std::any_of(free.begin(), free.end(),
                               [&](const Expr* f) { return f->name == ix->name; });
      if (twice)
        error(ix->loc, "free index variable '" + ix->name + "' appears twice on the left-hand side",
              "bind it with a 'for' range to write a diagonal");
      else
        free.push_back(ix.get());
    }
    for (const auto& ix : s.indices) {
      if (std::find(plain.begin(), plain.end(), ix.get()) != plain.end()) continue;
      in_lhs_index_ = true;
      check_expr(ix.get());
      in_lhs_index_ = false;
    }
    for (const Expr* f : free) {
      bind_var(f->name, f->loc);
      stage.loops.push_back(f->name);
    }
    reduce_sink_ = &stage.loops;
    check_expr(s.value.get());
    reduce_sink_ = nullptr;
    scope_.resize(mark);
    if (t) facts_.updates[t->name].push_back(std::move(stage));
  }

  // ---- expressions ----
  void check_expr(const Expr* e) {
    if (!e) return;
    switch (e->kind) {
      case ExprKind::IntLit:
      case ExprKind::FloatLit:
      case ExprKind::BoolLit: return;
      case ExprKind::Name: return check_name(*e);
      case ExprKind::Access: return check_access(*e);
      case ExprKind::Unary:
      case ExprKind::Binary:
        for (const auto& a : e->args) check_expr(a.get());
        return;
      case ExprKind::Call: return check_call(*e);
      case ExprKind::Cast:
        check_type_ref(e->cast_type);
        for (const auto& a : e->args) check_expr(a.get());
        return;
      case ExprKind::Reduce: return check_reduce(*e);
    }
  }

  void check_name(const Expr& e) {
    if (lookup_var(e.name)) return;
    auto g = globals_.find(e.name);
    if (g != globals_.end()) {
      const Global& x = g->second;
      if (x.kind == GlobalKind::Let && ctx_ == Ctx::Let && x.let_index >= let_limit_)
        error(e.loc, ctx_what_ + " uses '" + e.name + "', which is not declared before it",
              "a let may use params and earlier lets only");
      else if (x.kind == GlobalKind::Tensor)
        error(e.loc, "'" + e.name + "' is a tensor; read an element with " + e.name + "[...]");
      else if (x.kind == GlobalKind::TypeParam)
        error(e.loc, "'" + e.name + "' is a type, not a value",
              "convert a value with cast(" + e.name + ", ...)");
      return;
    }
    std::vector<std::string> cands;
    for (const auto& v : scope_) cands.push_back(v.name);
    for (const auto& x : p_.params) cands.push_back(x.name);
    for (const auto& l : p_.lets) cands.push_back(l.name);
    std::string hint = did_you_mean(e.name, cands);
    auto also = [&](const std::string& more) { hint = hint.empty() ? more : hint + " (" + more + ")"; };
    if (ctx_ != Ctx::Stmt) also(ctx_what_ + " may use only params, lets and literals");
    if (in_lhs_index_)
      also("a free index variable must be a whole index, as in y[t, c]; it then ranges over the "
           "tensor's full extent");
    error(e.loc, "unknown name '" + e.name + "'", hint);
  }

  void check_access(const Expr& e) {
    if (ctx_ != Ctx::Stmt) {
      error(e.loc, "'" + e.name + "' cannot be read in " + ctx_what_,
            ctx_what_ + " may use only params, lets and literals");
      return;
    }
    auto g = globals_.find(e.name);
    if (g == globals_.end()) {
      error(e.loc, "unknown tensor '" + e.name + "'", did_you_mean(e.name, tensor_names()));
    } else if (g->second.kind != GlobalKind::Tensor) {
      error(e.loc, "'" + e.name + "' is " + a_kind(g->second) + ", not a tensor");
    } else {
      const TensorDecl& t = *g->second.tensor;
      if (e.args.size() != t.shape.size())
        error(e.loc, "'" + t.name + "' has " + dims_text(t.shape.size(), "dimension") +
                         " but is read with " + dims_text(e.args.size(), "index"));
      note_read(t, e.loc);
    }
    check_expr(e.pad_value.get());
    for (const auto& a : e.args) check_expr(a.get());
  }

  void note_read(const TensorDecl& t, SourceLoc loc) {
    TensorState& st = tstate_[t.name];
    st.read = true;
    if (t.role == TensorRole::Input) return;
    if (t.name == defining_) {
      error(loc, "'" + t.name + "' is read in its own pure definition",
            "a pure definition cannot refer to itself; define '" + t.name +
                "' first (e.g. as 0) and write the recurrence as an update in a 'for'");
    } else if (!st.defined) {
      auto it = first_top_assign_.find(t.name);
      std::string hint =
          it != first_top_assign_.end() && std::tie(it->second.line, it->second.col) >
                                               std::tie(loc.line, loc.col)
              ? "its pure definition is at " + line_text(it->second) + "; move it before this read"
              : "give '" + t.name + "' a pure definition before reading it";
      error(loc, "'" + t.name + "' is read before its pure definition", hint);
    }
  }

  void check_call(const Expr& e) {
    const IntrinsicInfo* info = find_intrinsic(e.name);
    if (!info) {
      auto g = globals_.find(e.name);
      std::string hint = g != globals_.end() && g->second.kind == GlobalKind::Tensor
                             ? "'" + e.name + "' is a tensor: index it with " + e.name + "[...]"
                             : did_you_mean(e.name, intrinsic_names());
      if (hint.empty()) hint = "the functions are listed in docs/IR.md";
      error(e.loc, "unknown function '" + e.name + "'", hint);
    } else if (static_cast<size_t>(info->arity) != e.args.size()) {
      std::string hint;
      if ((e.name == "min" || e.name == "max") && e.args.size() == 1)
        hint = "two-argument " + e.name + " is elementwise; to reduce, write " + e.name +
               "(k in 0..K: ...)";
      error(e.loc, "'" + e.name + "' takes " + dims_text(info->arity, "argument") + ", found " +
                       std::to_string(e.args.size()),
            hint);
    }
    for (const auto& a : e.args) check_expr(a.get());
  }

  void check_reduce(const Expr& e) {
    std::string op(reduce_op_name(e.reduce_op));
    if (ctx_ != Ctx::Stmt) {
      error(e.loc, "a reduction cannot appear in " + ctx_what_,
            ctx_what_ + " may use only params, lets and literals");
      return;
    }
    if ((e.reduce_op == ReduceOp::Argmax || e.reduce_op == ReduceOp::Argmin) && e.ranges.size() != 1)
      error(e.loc, "'" + op + "' takes exactly one range, found " + std::to_string(e.ranges.size()),
            "nest two reductions, or reduce over one flattened index");
    size_t mark = scope_.size();
    for (const auto& r : e.ranges) {
      check_range(r);
      if (reduce_sink_ &&
          std::find(reduce_sink_->begin(), reduce_sink_->end(), r.var) == reduce_sink_->end())
        reduce_sink_->push_back(r.var);
    }
    for (const auto& a : e.args) check_expr(a.get());
    scope_.resize(mark);
  }

  // ---- after the statements ----
  void check_tensor_use() {
    for (const auto& t : p_.tensors) {
      if (globals_.at(t.name).tensor != &t) continue;  // a duplicate, already reported
      const TensorState& st = tstate_[t.name];
      if (t.role == TensorRole::Input) {
        if (!st.read)
          error(t.loc, "input '" + t.name + "' is never read",
                "remove it (inputs are part of the kernel ABI) or use it");
      } else if (t.role == TensorRole::Temp && !st.defined && !st.read) {
        error(t.loc, "temp '" + t.name + "' is never used", "remove it");
      } else if (!st.defined) {
        error(t.loc, std::string(role_name(t.role)) + " '" + t.name + "' has no pure definition",
              "define every element with a top-level assignment such as " + t.name + "[i] = ...");
      } else if (t.role == TensorRole::Temp && !st.read) {
        error(t.loc, "temp '" + t.name + "' is never read", "remove it");
      }
    }
  }

  std::vector<std::string> tensor_names() const {
    std::vector<std::string> out;
    for (const auto& t : p_.tensors) out.push_back(t.name);
    return out;
  }

  const Module& m_;
  const Pattern& p_;
  Diagnostics& diags_;
  std::map<std::string, Global> globals_;
  std::vector<ScopeVar> scope_;
  Ctx ctx_ = Ctx::Stmt;
  std::string ctx_what_;
  size_t let_limit_ = 0;
  bool in_lhs_index_ = false;
  std::string defining_;  // the tensor whose pure definition is being checked
  std::vector<std::string>* reduce_sink_ = nullptr;
  std::map<std::string, TensorState> tstate_;
  std::map<std::string, SourceLoc> first_top_assign_;
  PatternFacts facts_;
};

}  // namespace

void verify_pattern(const Module& m, Diagnostics& diags) { PatternChecker(m, diags).run(); }

bool verify_module(const Module& m, Diagnostics& diags) {
  size_t before = diags.items().size();
  verify_pattern(m, diags);
  bool pattern_ok = diags.items().size() == before;
  std::map<std::string, SourceLoc> names;
  for (const auto& w : m.workloads) {
    auto [it, fresh] = names.emplace(w.name, w.loc);
    if (!fresh)
      diags.error(w.loc, "workload '" + w.name + "' is declared twice (first at line " +
                             std::to_string(it->second.line) + ")",
                  "workload names must be unique within a pattern");
  }
  // A pattern error would show up once per workload: report each (location, message) once.
  std::set<std::tuple<int, int, std::string>> seen;
  for (const auto& d : diags.items()) seen.emplace(d.loc.line, d.loc.col, d.message);
  for (const auto& w : m.workloads) {
    Diagnostics scratch(diags.file());
    if (pattern_ok)
      instantiate_verified(m, w, scratch);
    else
      check_bindings(m, w, scratch);
    for (const auto& d : scratch.items())
      if (seen.emplace(d.loc.line, d.loc.col, d.message).second)
        diags.error(d.loc, d.message, d.hint);
  }
  return diags.items().size() == before;
}

}  // namespace ekb::ir
