// Computes in f64 the float arithmetic whose f32 rounding would not be a small relative error:
//  - values converted to an integer or bool, or compared: a rounding difference there is a
//    different integer. The reference computes floats in f64 (docs/IR.md), so x / scale rounded
//    in f32 can land on the other side of .5 than the reference's quotient (qnn.quantize), and a
//    point's voxel can differ at a cell boundary (robotics.voxel_grid);
//  - arguments of sin, cos and tan: their absolute error is the argument's, which grows with its
//    magnitude (an f32 angle near 2000 rad is off by ~1e-4: transformer.rope at position 1536 fails
//    the f32 tolerance).
// Evaluating the same operations in f64 reproduces the reference (inputs and f32 values are exact
// in f64). Only expressions containing float arithmetic are rewritten; values that crossed a float
// temp or accumulator keep that storage's precision.
#pragma once
#include "lir/loop_ir.h"

namespace ekb::lower {

void promote_to_f64(lir::Func& f);

}  // namespace ekb::lower
