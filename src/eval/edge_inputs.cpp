#include "eval/edge_inputs.h"

#include <cmath>

#include "ir/inputs.h"
#include "ir/interpreter.h"

namespace ekb::eval {

DomainEnds input_domain_ends(const ir::Instance& inst, const ir::TensorInstance& t) {
  DomainEnds e;
  const ir::InputDomain& dom = t.decl->domain;
  if (dom.kind == ir::DomainKind::Spd) return e;
  const ir::ScalarType ty = t.type;
  if (ir::is_float(ty)) {
    double lo = -1, hi = 1;
    if (dom.kind == ir::DomainKind::Range) {
      lo = ir::eval_constant(inst, *dom.lo).as_double();
      hi = ir::eval_constant(inst, *dom.hi).as_double();
    }
    if (!std::isfinite(lo) || !std::isfinite(hi) || !(lo < hi)) return e;
    double rlo = ir::round_to_type(ty, lo), rhi = ir::round_to_type(ty, hi);
    if (rlo < lo) rlo = ir::next_up(ty, rlo);
    if (rhi > hi) rhi = ir::next_down(ty, rhi);
    if (!(rlo < rhi)) return e;
    return {rlo, rhi, true};
  }
  int64_t tmin = ty == ir::ScalarType::Bool ? 0 : ir::int_min(ty);
  int64_t tmax = ty == ir::ScalarType::Bool ? 1 : ir::int_max(ty);
  int64_t lo = tmin, hi = tmax;
  if (dom.kind == ir::DomainKind::Range) {
    ir::LetValue l = ir::eval_constant(inst, *dom.lo), h = ir::eval_constant(inst, *dom.hi);
    double fl = l.is_float ? std::ceil(l.float_value) : static_cast<double>(l.int_value);
    double fh = h.is_float ? std::floor(h.float_value) : static_cast<double>(h.int_value);
    lo = fl <= static_cast<double>(tmin) ? tmin : static_cast<int64_t>(fl);
    hi = fh >= static_cast<double>(tmax) ? tmax : static_cast<int64_t>(fh);
  } else if (ty != ir::ScalarType::Bool && ty != ir::ScalarType::I8 && ty != ir::ScalarType::U8) {
    lo = -1000, hi = 1000;  // the default domain of wider integers (ir/inputs.h)
  }
  lo = std::max(lo, tmin);
  hi = std::min(hi, tmax);
  if (!(lo < hi)) return e;
  return {static_cast<double>(lo), static_cast<double>(hi), true};
}

std::vector<ir::TensorData> generate_edge_inputs(const ir::Instance& inst, uint64_t seed, bool* changed) {
  std::vector<ir::TensorData> inputs = ir::generate_inputs(inst, seed);
  if (changed) *changed = false;
  size_t k = 0;
  for (const ir::TensorInstance& t : inst.tensors) {
    if (t.decl->role != ir::TensorRole::Input) continue;
    ir::TensorData& d = inputs[k];
    DomainEnds ends = input_domain_ends(inst, t);
    ir::Rng rng(ir::input_stream_seed(seed ^ 0xED6EED6EED6EULL, k));
    ++k;
    if (!ends.usable) continue;
    if (changed) *changed = true;
    const int64_t n = d.num_elements();
    for (int64_t i = 0; i < n; ++i) {
      uint64_t r = rng.next() >> 62;  // two random bits
      if (r >= 2) continue;           // keep the random value
      double v = r == 0 ? ends.lo : ends.hi;
      if (d.is_float()) d.f[static_cast<size_t>(i)] = v;
      else d.i[static_cast<size_t>(i)] = static_cast<int64_t>(v);
    }
  }
  return inputs;
}

}  // namespace ekb::eval
