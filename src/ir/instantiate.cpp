// instantiate: binds a workload to the pattern (params, types), evaluates lets and shapes, checks
// input domains, types every expression (typecheck.cpp) and proves index bounds (bounds.cpp).
#include <cmath>
#include <limits>
#include <set>

#include "ir/verify_internal.h"

namespace ekb::ir {

namespace detail {

namespace {

std::string shape_text(const TensorInstance& t) {
  std::string out = type_text(t.type) + "[";
  for (size_t i = 0; i < t.shape.size(); ++i) out += (i ? ", " : "") + std::to_string(t.shape[i]);
  return out + "]";
}

bool has_name(const std::vector<Ident>& xs, const std::string& n) {
  for (const auto& x : xs)
    if (x.name == n) return true;
  return false;
}

// Checks the bindings and records them in inst (when given); false after reporting.
bool bind(const Module& m, const Workload& w, Instance* inst, WorkloadDiags& wd) {
  const Pattern& p = m.pattern;
  std::set<std::string> seen;
  for (const Binding& b : w.bindings) {
    bool is_param = has_name(p.params, b.name);
    bool is_type = !is_param && has_name(p.type_params, b.name);
    if (!seen.insert(b.name).second) {
      wd.error_here(b.loc, "'" + b.name + "' is bound twice in workload '" + w.name + "'",
                    "remove one of the bindings");
      continue;
    }
    if (!is_param && !is_type) {
      std::vector<std::string> cands;
      for (const auto& x : p.params) cands.push_back(x.name);
      for (const auto& x : p.type_params) cands.push_back(x.name);
      std::string hint = did_you_mean(b.name, cands);
      if (hint.empty()) {
        hint = "the pattern's params and types are:";
        for (size_t i = 0; i < cands.size(); ++i) hint += (i ? ", " : " ") + cands[i];
        if (cands.empty()) hint = "the pattern has no params or types";
      }
      wd.error_here(b.loc, "workload '" + w.name + "' binds '" + b.name +
                               "', which is not a param or type of " + p.name,
                    hint);
      continue;
    }
    if (is_param) {
      if (b.is_type)
        wd.error_here(b.loc, "param '" + b.name + "' needs an integer, found '" + b.type_name + "'");
      else if (inst)
        inst->params[b.name] = b.int_value;
      continue;
    }
    if (!b.is_type) {
      wd.error_here(b.loc, "type parameter '" + b.name + "' needs a type such as f32, found " +
                               std::to_string(b.int_value));
      continue;
    }
    auto t = parse_scalar_type(b.type_name);
    if (!t) {
      std::string hint = did_you_mean(b.type_name, scalar_type_names());
      wd.error_here(b.loc, "unknown type '" + b.type_name + "' for '" + b.name + "'",
                    hint.empty() ? "the types are f32, f16, bf16, f64, i8, u8, i16, i32, i64 and bool"
                                 : hint);
    } else if (inst) {
      inst->type_params[b.name] = *t;
    }
  }
  for (const auto& x : p.params)
    if (!seen.count(x.name))
      wd.error_here(w.loc, "workload '" + w.name + "' does not bind param '" + x.name + "'",
                    "add " + x.name + " = <integer> to its bindings");
  for (const auto& x : p.type_params)
    if (!seen.count(x.name) && !has_name(p.params, x.name))
      wd.error_here(w.loc, "workload '" + w.name + "' does not bind type '" + x.name + "'",
                    "add " + x.name + " = f32 (or another type) to its bindings");
  return !wd.has_errors();
}

bool eval_lets(Instance& inst, WorkloadDiags& wd) {
  for (const auto& let : inst.pattern().lets) {
    auto t = type_let(inst, let, wd);
    // Later lets may depend on this one; and a typing error (a literal that does not fit its
    // type) must not reach the evaluator.
    if (!t || wd.has_errors()) return false;
    auto v = eval_const(*let.value, inst, wd, "let '" + let.name + "'");
    if (!v) return false;
    LetValue lv;
    lv.is_float = is_float(*t);
    if (lv.is_float)
      lv.float_value = v->as_double();
    else
      lv.int_value = v->int_value;
    inst.lets[let.name] = lv;
  }
  return true;
}

bool eval_shapes(Instance& inst, WorkloadDiags& wd) {
  const Pattern& p = inst.pattern();
  for (const auto& d : p.tensors) {
    TensorInstance ti;
    ti.decl = &d;
    if (auto s = parse_scalar_type(d.type.name)) {
      ti.type = *s;
    } else if (auto tp = inst.type_params.find(d.type.name); tp != inst.type_params.end()) {
      ti.type = tp->second;
    }
    inst.tensors.push_back(ti);
  }
  for (auto& ti : inst.tensors) {
    const TensorDecl& d = *ti.decl;
    if (!type_tensor_decl(inst, ti, wd)) continue;
    int64_t elements = 1;
    bool ok = true;
    for (size_t i = 0; i < d.shape.size(); ++i) {
      std::string what = "extent " + std::to_string(i) + " of '" + d.name + "'";
      auto v = eval_const(*d.shape[i], inst, wd, what);
      if (!v) {
        ok = false;
        continue;
      }
      int64_t n = v->int_value;
      if (n <= 0) {
        wd.error(start_loc(*d.shape[i]), what + " is " + std::to_string(n) + "; extents must be positive",
                 "check the workload's params");
        ok = false;
        continue;
      }
      // Keep num_bytes() representable: 8-byte elements times the element count.
      if (elements > std::numeric_limits<int64_t>::max() / 8 / n) {
        wd.error(d.loc, "'" + d.name + "' has too many elements",
                 "its byte size does not fit in 64 bits");
        ok = false;
        elements = 1;
      } else {
        elements *= n;
      }
      ti.shape.push_back(n);
    }
    if (!ok) ti.shape.clear();
  }
  return !wd.has_errors();
}

// Input domains: constant, ordered, finite, within the element type; spd on square float
// matrices over the last two axes. Returns the numeric ranges the bounds proofs use for data-dependent indices.
std::map<std::string, RealInterval> check_domains(Instance& inst, WorkloadDiags& wd) {
  std::map<std::string, RealInterval> out;
  for (const auto& ti : inst.tensors) {
    const TensorDecl& d = *ti.decl;
    if (d.domain.kind == DomainKind::Spd) {
      // Symmetric positive-definite matrices over the last two axes (a batch of them when the
      // rank is higher).
      size_t r = ti.shape.size();
      bool square = r >= 2 && ti.shape[r - 2] == ti.shape[r - 1];
      if (!square || !is_float(ti.type))
        wd.error(d.loc, "'spd' needs a float input whose last two extents are equal; '" + d.name +
                            "' is " + shape_text(ti),
                 "spd describes (a batch of) N x N symmetric positive-definite float matrices");
      continue;
    }
    if (d.domain.kind != DomainKind::Range || !d.domain.lo || !d.domain.hi) continue;
    std::string what = "the domain of '" + d.name + "'";
    auto lo = eval_const(*d.domain.lo, inst, wd, what);
    auto hi = eval_const(*d.domain.hi, inst, wd, what);
    if (!lo || !hi) continue;
    double l = lo->as_double(), h = hi->as_double();
    RealInterval iv{l, h};
    if (std::isnan(l) || std::isnan(h) || std::isinf(l) || std::isinf(h)) {
      wd.error(d.loc, what + " " + format_interval(iv) + " must be finite",
               "inputs are drawn uniformly from the range");
      continue;
    }
    if (l > h) {
      wd.error(d.loc, what + " is empty: " + format_interval(iv), "write in [lo, hi] with lo <= hi");
      continue;
    }
    RealInterval r = RealInterval::of_type(ti.type);
    if (!is_float(ti.type) && !iv.within(r.lo, r.hi)) {
      wd.error(d.loc, what + " " + format_interval(iv) + " exceeds the range of " +
                          type_text(ti.type) + ", " + format_interval(r));
      continue;
    }
    out[d.name] = iv;
  }
  return out;
}

}  // namespace

std::optional<Instance> instantiate_verified(const Module& m, const Workload& w, Diagnostics& diags) {
  Instance inst;
  inst.module = &m;
  inst.workload = &w;
  WorkloadDiags wd(diags, w);
  if (!bind(m, w, &inst, wd)) return std::nullopt;
  if (!eval_lets(inst, wd)) return std::nullopt;
  if (!eval_shapes(inst, wd)) return std::nullopt;
  auto ranges = check_domains(inst, wd);
  if (wd.has_errors()) return std::nullopt;
  if (!type_statements(inst, wd)) return std::nullopt;
  check_bounds(inst, ranges, wd);
  if (wd.has_errors()) return std::nullopt;
  return inst;
}

void check_bindings(const Module& m, const Workload& w, Diagnostics& diags) {
  WorkloadDiags wd(diags, w);
  bind(m, w, nullptr, wd);
}

}  // namespace detail

std::optional<Instance> instantiate(const Module& m, const Workload& w, Diagnostics& diags) {
  // Typing and bounds assume resolved names, so the pattern-level checks come first.
  Diagnostics pattern(diags.file());
  verify_pattern(m, pattern);
  if (pattern.has_errors()) {
    for (const auto& d : pattern.items()) diags.error(d.loc, d.message, d.hint);
    return std::nullopt;
  }
  return detail::instantiate_verified(m, w, diags);
}

}  // namespace ekb::ir
