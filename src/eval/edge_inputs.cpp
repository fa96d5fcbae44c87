#include "eval/edge_inputs.h"

#include <cmath>
#include <stdexcept>

#include "ir/inputs.h"
#include "ir/interpreter.h"

namespace ekb::eval {

DomainEnds input_domain_ends(const ir::Instance& inst, const ir::TensorInstance& t) {
  if (t.decl->domain.kind == ir::DomainKind::Spd) return {};
  ir::ValueRange r;
  try {
    r = ir::input_value_range(inst, t);
  } catch (const std::exception&) {
    return {};  // an empty or infinite domain has no ends to sit on
  }
  const double lo = r.is_float ? r.flo : static_cast<double>(r.ilo);
  const double hi = r.is_float ? r.fhi : static_cast<double>(r.ihi);
  if (!(lo < hi)) return {};
  return {lo, hi, true};
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
