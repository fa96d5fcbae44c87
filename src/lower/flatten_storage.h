// Multi-dimensional Loads and Stores become one flat row-major index:
//   x[i, j, k]  ->  x[i * (J * K) + j * K + k]
// (The memory layer's layout directives will change the strides here.)
#pragma once
#include "lir/loop_ir.h"

namespace ekb::lower {

void flatten_storage(lir::Func& f);

// The row-major flat index of `indices` into `shape` (index type).
lir::ExprP flat_index(const std::vector<lir::ExprP>& indices, const std::vector<int64_t>& shape);

}  // namespace ekb::lower
