// Splits a serial loop whose body reads through a boundary (pad, edge, mirror) into up to three
// loops over consecutive ranges of its variable: the iterations before every such read that
// depends on the variable is inside its buffer, the iterations where all of them are, and those
// after. The loops run in the original order, so the result is the same program; `simplify` then
// removes the boundary handling from the middle loop (its ranges settle the selects, clamps and
// mirror indices), and the middle loop is nearly all iterations of a stencil: one test per image
// edge instead of one per tap. Halide's PartitionLoops does the same.
//
// Runs before lower_boundaries, on cpu loop nests only (a gpu kernel takes its shape from the
// loops). A loop is partitioned when its bounds are constant and some boundary read's index is
// c * v + r there, c a non-zero constant and r bounded by the loops around and inside it; at most
// kMaxPartitionDepth loops on one path are partitioned (each one triples the code below it).
// A parallel loop is split too: its interior stays parallel, its edge parts (a row or two) run
// serially. Vectorized and unrolled loops are left whole (their inner serial loops are split), and
// so are loops whose body allocates a buffer (a compute_at box: copies would need buffers of their own).
#pragma once
#include "lir/loop_ir.h"

namespace ekb::lower {

inline constexpr int kMaxPartitionDepth = 2;

void partition_loops(lir::Func& f);

}  // namespace ekb::lower
