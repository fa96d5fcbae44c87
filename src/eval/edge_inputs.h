// Inputs at the ends of their domains (docs/EVALUATION.md §3): a trial where
// every other element of each input sits exactly on its declared bound, which is where clamps,
// saturating casts, overflow in a narrower accumulator and off-by-one range handling go wrong.
//
// Built from generate_inputs(inst, seed) (so a tensor keeps its spread of interior values): each
// element is kept with probability 1/2, else replaced by the domain's low or high end (1/4 each).
// Float ends are rounded into the element type and nudged inward exactly as ir/inputs.h does, so a
// kernel sees the value the reference uses. `spd` inputs are left alone (bounds would break
// definiteness).
#pragma once
#include <cstdint>
#include <vector>

#include "ir/instance.h"
#include "ir/tensor_data.h"

namespace ekb::eval {

// The ends of an input's declared domain as values of its element type (ir::input_value_range:
// float ends rounded into the type and nudged inward; integer ends clipped to the type; the default
// domains). Not usable for `spd` inputs and domains whose ends coincide.
struct DomainEnds {
  double lo = 0, hi = 0;
  bool usable = false;
  bool contains(double v) const { return usable && lo <= v && v <= hi; }
};
DomainEnds input_domain_ends(const ir::Instance& inst, const ir::TensorInstance& t);

// One TensorData per input, like ir::generate_inputs. `changed` (optional) is set when at least one
// input has a domain with distinct ends, i.e. when the trial differs from a random one in kind.
std::vector<ir::TensorData> generate_edge_inputs(const ir::Instance& inst, uint64_t seed,
                                                 bool* changed = nullptr);

}  // namespace ekb::eval
