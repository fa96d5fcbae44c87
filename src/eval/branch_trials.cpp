#include "eval/branch_trials.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <set>

#include "eval/edge_inputs.h"
#include "ir/inputs.h"
#include "ir/interpreter.h"

namespace ekb::eval {

std::string_view construct_kind_name(ConstructKind k) {
  switch (k) {
    case ConstructKind::Condition: return "condition on data";
    case ConstructKind::Division: return "division by data";
    case ConstructKind::PartialMath: return "partial function of data";
    case ConstructKind::MinMax: return "min/max";
    case ConstructKind::ArgReduction: return "argmax/argmin";
    case ConstructKind::TimeSteppedStencil: return "time-stepped stencil";
  }
  return "?";
}

bool ComputeLayerAnalysis::has(ConstructKind k) const {
  return std::any_of(constructs.begin(), constructs.end(), [k](const auto& c) { return c.kind == k; });
}

namespace {

using ir::Expr;
using ir::ExprKind;

void visit(const Expr& e, const std::function<void(const Expr&)>& f) {
  f(e);
  for (const ir::ExprP& a : e.args) visit(*a, f);
  if (e.pad_value) visit(*e.pad_value, f);
}

bool reads_data(const Expr& e) {
  bool found = false;
  visit(e, [&](const Expr& x) { found |= x.kind == ExprKind::Access; });
  return found;
}

bool is_compare(ir::BinaryOp op) {
  using B = ir::BinaryOp;
  return op == B::Eq || op == B::Ne || op == B::Lt || op == B::Le || op == B::Gt || op == B::Ge;
}

bool is_input(const ir::Instance& inst, const std::string& tensor) {
  const ir::TensorDecl* d = inst.pattern().find_tensor(tensor);
  return d && d->role == ir::TensorRole::Input;
}

// The input an expression reads one element of, through casts (and, with `through_sign`, abs and
// negation, which keep equal magnitudes equal): "" when it is anything else.
std::string element_of_input(const ir::Instance& inst, const Expr& e, bool through_sign) {
  const Expr* x = &e;
  while (true) {
    if (x->kind == ExprKind::Cast) x = x->args[0].get();
    else if (through_sign && x->kind == ExprKind::Call && x->name == "abs") x = x->args[0].get();
    else if (through_sign && x->kind == ExprKind::Unary && x->unary_op == ir::UnaryOp::Neg) x = x->args[0].get();
    else break;
  }
  return x->kind == ExprKind::Access && is_input(inst, x->name) ? x->name : "";
}

std::optional<double> constant_value(const ir::Instance& inst, const Expr& e) {
  if (reads_data(e)) return std::nullopt;
  try {
    return ir::eval_constant(inst, e).as_double();
  } catch (const std::exception&) {
    return std::nullopt;  // reads an index variable
  }
}

const std::string* name_of(const Expr& e) { return e.kind == ExprKind::Name ? &e.name : nullptr; }

// `v + c`, `c + v`, `v - c`: an index at an offset from variable v.
bool is_offset_index(const Expr& e, const std::set<std::string>& vars) {
  if (e.kind != ExprKind::Binary || (e.binary_op != ir::BinaryOp::Add && e.binary_op != ir::BinaryOp::Sub)) return false;
  const Expr& a = *e.args[0];
  const Expr& b = *e.args[1];
  auto var = [&](const Expr& x) { return x.kind == ExprKind::Name && vars.count(x.name); };
  auto lit = [](const Expr& x) { return x.kind == ExprKind::IntLit; };
  return (var(a) && lit(b)) || (e.binary_op == ir::BinaryOp::Add && lit(a) && var(b));
}

class Analyzer {
 public:
  explicit Analyzer(const ir::Instance& inst) : inst_(inst) {}

  ComputeLayerAnalysis run() {
    for (const ir::Stmt& s : inst_.pattern().stmts) statement(s, {});
    return std::move(out_);
  }

 private:
  void statement(const ir::Stmt& s, std::vector<const ir::Range*> loops) {
    if (s.kind == ir::StmtKind::For) {
      for (const ir::Range& r : s.ranges) loops.push_back(&r);
      for (const ir::Stmt& b : s.body) statement(b, loops);
      return;
    }
    for (const ir::ExprP& i : s.indices) expression(*i);
    expression(*s.value);
    if (!loops.empty()) stencil(s, loops);
  }

  void add(ConstructKind k, const Expr& e) { out_.constructs.push_back({k, e.loc}); }

  void expression(const Expr& root) {
    visit(root, [&](const Expr& e) {
      if (e.kind == ExprKind::Binary && is_compare(e.binary_op) && (reads_data(*e.args[0]) || reads_data(*e.args[1]))) {
        add(ConstructKind::Condition, e);
        compared(*e.args[0], *e.args[1]);
      } else if (e.kind == ExprKind::Binary && (e.binary_op == ir::BinaryOp::Div || e.binary_op == ir::BinaryOp::Mod) &&
                 reads_data(*e.args[1])) {
        add(ConstructKind::Division, e);
      } else if (e.kind == ExprKind::Call && reads_data(e)) {
        static const std::set<std::string> partial{"sqrt", "rsqrt", "log", "log2", "pow", "atan2"};
        if (partial.count(e.name)) add(ConstructKind::PartialMath, e);
        if (e.name == "min" || e.name == "max" || e.name == "clamp") {
          add(ConstructKind::MinMax, e);
          for (size_t k = 1; k < e.args.size(); ++k) compared(*e.args[0], *e.args[k]);
        }
      } else if (e.kind == ExprKind::Reduce) {
        reduction(e);
      }
    });
  }

  // Two operands compared (or min/max'ed): an input element against a constant is a threshold,
  // against another input element a possible tie.
  void compared(const Expr& a, const Expr& b) {
    const std::string ia = element_of_input(inst_, a, false), ib = element_of_input(inst_, b, false);
    if (!ia.empty() && !ib.empty()) {
      tie(ia);
      tie(ib);
    } else if (!ia.empty()) {
      if (auto v = constant_value(inst_, b)) out_.thresholds.push_back({ia, *v});
    } else if (!ib.empty()) {
      if (auto v = constant_value(inst_, a)) out_.thresholds.push_back({ib, *v});
    }
  }

  void tie(const std::string& input) {
    if (std::find(out_.tie_inputs.begin(), out_.tie_inputs.end(), input) == out_.tie_inputs.end())
      out_.tie_inputs.push_back(input);
  }

  void reduction(const Expr& e) {
    using R = ir::ReduceOp;
    const Expr& body = *e.args[0];
    if (e.reduce_op == R::Max || e.reduce_op == R::Min) add(ConstructKind::MinMax, e);
    if (e.reduce_op == R::Argmax || e.reduce_op == R::Argmin) {
      add(ConstructKind::ArgReduction, e);
      if (std::string in = element_of_input(inst_, body, true); !in.empty()) tie(in);
    }
    for (const ir::Range& r : e.ranges) reduced_along(body, r.var, r.var, 0);
  }

  // Records the input axes that `var` runs along where `body` reads them: directly, or through a
  // temp whose pure definition is elementwise in that axis (depth bounds the chase).
  void reduced_along(const Expr& body, const std::string& var, const std::string& reduction_var, int depth) {
    visit(body, [&](const Expr& a) {
      if (a.kind != ExprKind::Access) return;
      for (size_t d = 0; d < a.args.size(); ++d) {
        const std::string* n = name_of(*a.args[d]);
        if (!n || *n != var) continue;
        if (is_input(inst_, a.name)) {
          reduced_axis(a.name, static_cast<int>(d), reduction_var);
        } else if (depth < 2) {
          for (const ir::Stmt& s : inst_.pattern().stmts) {
            if (s.kind != ir::StmtKind::Assign || s.tensor != a.name || d >= s.indices.size()) continue;
            if (const std::string* defined = name_of(*s.indices[d]))
              reduced_along(*s.value, *defined, reduction_var, depth + 1);
          }
        }
      }
    });
  }

  void reduced_axis(const std::string& input, int axis, const std::string& var) {
    for (const ReducedAxis& r : out_.reduced_axes)
      if (r.input == input) return;
    out_.reduced_axes.push_back({input, axis, var});
  }

  // An update inside loops, one of which (time) is not among the written indices, that reads a
  // computed tensor at an offset from the spatial loop variables: a time-stepped stencil, whose
  // result depends on the order of updates wherever neighbours differ.
  void stencil(const ir::Stmt& s, const std::vector<const ir::Range*>& loops) {
    std::set<std::string> written;
    for (const ir::ExprP& i : s.indices)
      visit(*i, [&](const Expr& x) {
        if (x.kind == ExprKind::Name) written.insert(x.name);
      });
    std::set<std::string> spatial;
    bool timed = false;
    for (const ir::Range* r : loops) {
      if (written.count(r->var)) spatial.insert(r->var);
      else timed = true;
    }
    if (!timed || spatial.empty()) return;
    std::set<int> axes;
    int rank = 0;
    visit(*s.value, [&](const Expr& a) {
      if (a.kind != ExprKind::Access || is_input(inst_, a.name)) return;
      for (size_t d = 0; d < a.args.size(); ++d)
        if (is_offset_index(*a.args[d], spatial)) {
          axes.insert(static_cast<int>(d));
          rank = static_cast<int>(a.args.size());
        }
    });
    if (axes.empty()) return;
    out_.constructs.push_back({ConstructKind::TimeSteppedStencil, s.loc});
    if (out_.stencil_rank == 0) {
      out_.stencil_rank = rank;
      out_.stencil_axes.assign(axes.begin(), axes.end());
    }
  }

  const ir::Instance& inst_;
  ComputeLayerAnalysis out_;
};

const ir::TensorInstance* input_instance(const ir::Instance& inst, const std::string& name, size_t* index) {
  size_t k = 0;
  for (const ir::TensorInstance& t : inst.tensors) {
    if (t.decl->role != ir::TensorRole::Input) continue;
    if (t.decl->name == name) {
      *index = k;
      return &t;
    }
    ++k;
  }
  return nullptr;
}

// Inputs whose values may be changed: a domain with distinct ends, not `spd`.
bool changeable(const ir::Instance& inst, const std::string& name) {
  size_t k = 0;
  const ir::TensorInstance* t = input_instance(inst, name, &k);
  return t && input_domain_ends(inst, *t).usable;
}

std::string fmt_value(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

std::string join(const std::vector<std::string>& parts) {
  std::string s;
  for (const std::string& p : parts) s += (s.empty() ? "" : "; ") + p;
  return s;
}

}  // namespace

ComputeLayerAnalysis analyze_compute_layer(const ir::Instance& inst) { return Analyzer(inst).run(); }

std::vector<BranchTrialPlan> plan_branch_trials(const ir::Instance& inst) {
  const ComputeLayerAnalysis a = analyze_compute_layer(inst);
  std::vector<BranchTrialPlan> plans;

  // Constant lines make a difference only where something downstream branches, divides or takes
  // a partial function: a variance of 0, a maximum reached by a whole line, a normalizer of 0.
  const bool sensitive = a.has(ConstructKind::Condition) || a.has(ConstructKind::Division) ||
                         a.has(ConstructKind::PartialMath) || a.has(ConstructKind::MinMax) ||
                         a.has(ConstructKind::ArgReduction);
  if (sensitive) {
    BranchTrialPlan p;
    p.kind = BranchTrialKind::ConstantLines;
    std::vector<std::string> parts;
    for (const ReducedAxis& r : a.reduced_axes) {
      if (!changeable(inst, r.input)) continue;
      p.lines.push_back(r);
      parts.push_back("every other line along axis " + std::to_string(r.axis) + " of '" + r.input +
                      "' constant (reduced by " + r.var + ")");
    }
    if (!p.lines.empty()) {
      p.label = "constant lines: " + join(parts);
      plans.push_back(std::move(p));
    }
  }

  {
    BranchTrialPlan p;
    p.kind = BranchTrialKind::Ties;
    std::vector<std::string> parts;
    for (const std::string& in : a.tie_inputs) {
      if (!changeable(inst, in)) continue;
      p.tie_inputs.push_back(in);
      parts.push_back("'" + in + "' duplicates at its domain's ends");
    }
    for (const ThresholdValue& th : a.thresholds) {
      size_t k = 0;
      const ir::TensorInstance* t = input_instance(inst, th.input, &k);
      if (!t || !input_domain_ends(inst, *t).contains(th.value)) continue;
      bool seen = false;
      for (const ThresholdValue& q : p.thresholds) seen |= q.input == th.input && q.value == th.value;
      if (seen) continue;
      p.thresholds.push_back(th);
      parts.push_back("'" + th.input + "' at " + fmt_value(th.value));
    }
    if (!parts.empty()) {
      p.label = "ties and thresholds: " + join(parts);
      plans.push_back(std::move(p));
    }
  }

  if (a.stencil_rank > 0) {
    std::vector<std::string> striped;
    std::string names;
    for (const ir::TensorInstance& t : inst.tensors)
      if (t.decl->role == ir::TensorRole::Input && static_cast<int>(t.shape.size()) == a.stencil_rank &&
          input_domain_ends(inst, t).usable) {
        striped.push_back(t.decl->name);
        names += (names.empty() ? "'" : ", '") + t.decl->name + "'";
      }
    std::vector<int> axes{a.stencil_axes.front()};
    if (a.stencil_axes.back() != axes[0]) axes.push_back(a.stencil_axes.back());
    for (int axis : striped.empty() ? std::vector<int>{} : axes) {
      BranchTrialPlan p;
      p.kind = BranchTrialKind::Stripes;
      p.axis = axis;
      p.striped = striped;
      p.label = "stripes: " + names + " alternating between the domain's ends along axis " + std::to_string(axis) +
                " (time-stepped stencil)";
      plans.push_back(std::move(p));
    }
  }
  if (plans.size() > static_cast<size_t>(kMaxBranchTrials)) plans.resize(kMaxBranchTrials);
  return plans;
}

namespace {

// A value of the line near `v` with few significant bits (a multiple of 1/8 for floats), so that
// sums and means of a constant line are exact in any order; `v` itself when that leaves the domain.
double round_value(const ir::TensorData& d, const DomainEnds& ends, double v) {
  if (!d.is_float()) return v;
  const double r = ir::round_to_type(d.type, std::round(v * 8) / 8);
  return ends.contains(r) ? r : v;
}

void set(ir::TensorData& d, int64_t k, double v) {
  if (d.is_float()) d.f[static_cast<size_t>(k)] = v;
  else d.i[static_cast<size_t>(k)] = static_cast<int64_t>(v);
}

void constant_lines(const ir::TensorInstance& t, const DomainEnds& ends, int axis, ir::TensorData& d) {
  int64_t outer = 1, inner = 1;
  for (int k = 0; k < axis; ++k) outer *= t.shape[static_cast<size_t>(k)];
  for (size_t k = static_cast<size_t>(axis) + 1; k < t.shape.size(); ++k) inner *= t.shape[k];
  const int64_t len = t.shape[static_cast<size_t>(axis)];
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      if ((o * inner + i) % 2) continue;  // every other line, so both sides of a branch are taken
      const int64_t first = o * len * inner + i;
      const double v = round_value(d, ends, d.as_double(first));
      for (int64_t k = 0; k < len; ++k) set(d, first + k * inner, v);
    }
}

}  // namespace

std::vector<ir::TensorData> generate_branch_inputs(const ir::Instance& inst, const BranchTrialPlan& plan, uint64_t seed) {
  std::vector<ir::TensorData> inputs = ir::generate_inputs(inst, seed);
  auto input = [&](const std::string& name, const ir::TensorInstance** t) -> ir::TensorData* {
    size_t k = 0;
    *t = input_instance(inst, name, &k);
    return *t ? &inputs[k] : nullptr;
  };
  switch (plan.kind) {
    case BranchTrialKind::ConstantLines:
      for (const ReducedAxis& r : plan.lines) {
        const ir::TensorInstance* t = nullptr;
        if (ir::TensorData* d = input(r.input, &t)) constant_lines(*t, input_domain_ends(inst, *t), r.axis, *d);
      }
      break;
    case BranchTrialKind::Ties: {
      // Per input: a quarter of the elements at each threshold it is compared with, and, for tie
      // inputs, half of the rest at one of the domain's ends (so the maximum and the minimum repeat).
      size_t stream = 0;
      for (const ir::TensorInstance& t : inst.tensors) {
        if (t.decl->role != ir::TensorRole::Input) continue;
        ir::TensorData& d = inputs[stream];
        ir::Rng rng(ir::input_stream_seed(seed ^ 0x71E5'71E5'71E5ULL, stream++));
        const std::string& name = t.decl->name;
        std::vector<double> thresholds;
        for (const ThresholdValue& th : plan.thresholds)
          if (th.input == name) thresholds.push_back(d.is_float() ? ir::round_to_type(d.type, th.value) : th.value);
        const bool ties = std::count(plan.tie_inputs.begin(), plan.tie_inputs.end(), name) > 0;
        if (thresholds.empty() && !ties) continue;
        const DomainEnds ends = input_domain_ends(inst, t);
        for (int64_t k = 0; k < d.num_elements(); ++k) {
          const uint64_t r = rng.next();
          if (!thresholds.empty() && (r >> 62) == 0) {
            set(d, k, thresholds[(r >> 32) % thresholds.size()]);
          } else if (ties && ((r >> 60) & 1)) {
            set(d, k, (r >> 59) & 1 ? ends.hi : ends.lo);
          }
        }
      }
      break;
    }
    case BranchTrialKind::Stripes:
      for (const std::string& name : plan.striped) {
        const ir::TensorInstance* t = nullptr;
        ir::TensorData* d = input(name, &t);
        if (!d) continue;
        const DomainEnds ends = input_domain_ends(inst, *t);
        int64_t inner = 1;
        for (size_t k = static_cast<size_t>(plan.axis) + 1; k < t->shape.size(); ++k) inner *= t->shape[k];
        const int64_t len = t->shape[static_cast<size_t>(plan.axis)];
        for (int64_t k = 0; k < d->num_elements(); ++k) set(*d, k, (k / inner) % len % 2 ? ends.hi : ends.lo);
      }
      break;
  }
  return inputs;
}

}  // namespace ekb::eval
