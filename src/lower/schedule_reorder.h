// reorder(STAGE, l1, l2, ..., ln): the listed loops, outermost first, take the places the listed
// loops occupy in the stage's loop nest (in every copy); unlisted loops stay where they are.
//  - Loops must be perfectly nested (guards of splits move inward with the innermost body).
//  - A pure definition's reduction loop listed before one of its pure loops leaves its statement:
//    materialize_reduction gives it a nest of its own that accumulates in memory.
//  - Legal only where no dependence is reversed: an update's ordered loops keep their relative
//    order; a free variable crosses an ordered loop only if the statement touches its tensor at the
//    written element alone; reduction loops swap only in an associative, commutative reduction
//    (sum, prod, max, min: floating-point reassociation is allowed), never in argmax/argmin.
//  - A loop whose bounds depend on another (a triangular range) stays inside it.
#pragma once
#include <string>
#include <vector>

#include "lir/loop_ir.h"

namespace ekb::lower {

void reorder(lir::Func& f, const std::string& stage, const std::vector<std::string>& order);

}  // namespace ekb::lower
