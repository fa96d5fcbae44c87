// Replaces boundary reads by plain loads, with the index math the reference interpreter defines
// (ir/interp_nodes.h, fix_index):
//   pad(x, v)[i, j]  ->  select(0 <= i && i < H && 0 <= j && j < W, x[i, j], v)
//   edge(x)[i, j]    ->  x[clamp(i, 0, H - 1), clamp(j, 0, W - 1)]
//   mirror(x)[i, j]  ->  x[mirror_index(i, H), mirror_index(j, W)]   (reflect, edge not repeated)
// Checks that hold over a loop's whole range are removed later by simplify.
#pragma once
#include "lir/loop_ir.h"

namespace ekb::lower {

void lower_boundaries(lir::Func& f);
// One boundary read of buffer b as a plain load (or a select around one).
lir::ExprP lower_boundary(const lir::Expr& load, const lir::Buffer& b);

}  // namespace ekb::lower
