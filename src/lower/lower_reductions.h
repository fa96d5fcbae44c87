// Replaces every Reduce expression by a scalar accumulator computed just before the statement
// that uses it:
//
//   y[i] = b[i] + sum(k in 0..K: f(k))   ->   var acc = 0
//                                              for k in [0, +K) { acc = acc + f(k) }
//                                              y[i] = b[i] + acc
//
//  - sum/prod/max/min start from their identity (0, 1, -inf or the type's minimum, +inf or its
//    maximum); float max/min propagate NaN (BinOp Max/Min semantics), like the reference.
//  - argmax/argmin keep the first index of the extreme value: the first element is taken
//    unconditionally (even NaN), later ones only when strictly greater/less.
//  - A reduction inside a select branch or the right operand of &&/|| is computed under the
//    condition that selects it (`if (cond) { ... }`), so a reduction the reference would not
//    evaluate is not evaluated either (it may read out of bounds when not selected).
//  - A reduction nested in another's body is computed inside that body's loop.
#pragma once
#include "lir/loop_ir.h"

namespace ekb::lower {

void lower_reductions(lir::Func& f);

}  // namespace ekb::lower
