// Inputs that no earlier call saw, one set per timed call (docs/EVALUATION.md §5), so that no
// kernel can gain speed by recognising its inputs: a memo keyed by a few sampled values (or by a
// hash of everything) never hits, and a kernel that replays a kept answer is caught when its
// outputs are compared with the baseline's on the same set.
//
// Generating every set from scratch would cost more than many of the kernels timed, so a set is
// derived from the verified random trials, which are already bytes: element k of input X is
//     wrap(base[k] + partner[(k + shift) mod n] + offset)   within X's value range,
// where base and partner are two of the trials, and shift and offset are drawn per call from a
// generator seeded from std::random_device (the kernel cannot know them, and they never repeat).
// The sum of two uniform values wrapped into the range is uniform there: every element changes,
// and the set is a random draw from the same domain as the trials (ir/inputs.h), so it exercises
// the kernel like one. An `spd` input instead becomes base + c*I (c drawn in [0.05, 0.5]): still
// symmetric positive definite, with every factor of its decomposition changed.
#pragma once
#include <cstdint>
#include <vector>

#include "eval/workload_reference.h"
#include "ir/inputs.h"

namespace ekb::eval {

class FreshInputs {
 public:
  // `bases`: verified random trials of `reference`'s workload (at least one), which must outlive this.
  FreshInputs(const WorkloadReference& reference, std::vector<const Trial*> bases);

  // Writes the next set into `inputs` (one buffer per input, ABI order; resized as needed).
  void next(InputBuffers& inputs);

  // A set's random choices, drawn once and written as often as needed: the timing loop derives
  // every set straight into the kernel's arena with its copy (KernelSession::write_fresh_inputs),
  // and could write the round's compared set again for the second kernel at the same cost as a set
  // of its own (the uniform-work timing of docs/EVALUATION.md's known limits).
  struct InputDraw {
    size_t shift = 0;
    double offset = 0;
    uint64_t seed = 0;
  };
  struct Draw {
    size_t base = 0, partner = 0;  // indices into the bases
    std::vector<InputDraw> per_input;
  };
  Draw draw();
  // The set `d` stands for, straight into `dest` (one pointer per input, ABI order, each to its
  // input's size) and the same bytes into *copy when given (resized as needed), in one pass; the
  // same bytes every time.
  void write(const Draw& d, const std::vector<uint8_t*>& dest, InputBuffers* copy) const;
  void write(const Draw& d, InputBuffers& out) const;  // as next(InputBuffers&) writes

 private:
  struct Input {
    ir::ScalarType type;
    std::vector<int64_t> shape;
    bool spd = false;
    ir::ValueRange range;
  };
  std::vector<Input> inputs_;
  std::vector<const Trial*> bases_;
  ir::Rng rng_;
  uint64_t sets_ = 0;
};

}  // namespace ekb::eval
