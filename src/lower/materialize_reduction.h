// Moves a pure definition's reduction loop out of its statement, Halide-style, so that reorder can
// place it among the pure loops. The statement `C[i, j] = E(sum(k: body))`, lowered by
// lower_reductions to a scalar accumulator inside the pure loops, becomes three nests over copies
// of the pure loops:
//
//   for i, j:     acc[i, j] = 0                      (the reduction's identity)
//   for i, j, k:  acc[i, j] = acc[i, j] + body
//   for i, j:     C[i, j] = E(acc[i, j])
//
// where acc is a new temp of C's shape. When E is the reduction itself, or `x + sum(...)`, and C
// holds the accumulator's type exactly (not a half type), C is the accumulator: initialized to x,
// updated in place, and the last nest disappears (GEMM's C = beta * C_in + sum(...)).
// The accumulation order for each element stays that of the reduction loops.
#pragma once
#include <string>

#include "lir/loop_ir.h"
#include "lower/schedule_loops.h"

namespace ekb::lower {

// `chain` is a nest of `stage`'s pure loops whose body holds the reduction loop `var`. Returns what
// replaces the nest; throws ScheduleError when the reduction cannot leave its statement (it is
// evaluated under a condition, is nested in another reduction, or is an argmax/argmin).
lir::StmtP materialize_reduction(lir::Func& f, lir::Stage& stage, const LoopChain& chain, const std::string& var);

}  // namespace ekb::lower
