// Constant folding and simplification with integer bounds (loop ranges, let values, type ranges):
//  - folds constant operations with the IR's exact semantics (wrapping, floor division, float
//    results rounded to their type), x + 0, x * 1, a + (b - a), (x + c1) + c2, ...;
//  - decides comparisons, min/max, clamps, selects and boundary checks that the bounds settle
//    (e.g. the padding test of a read that is inside the buffer over the whole loop);
//  - floor division and modulo by a power of two become shifts and masks, and by other positive
//    values C's / and % where the dividend is provably non-negative (floor-division helpers in
//    inner loops are slow);
//  - marks integer +, -, *, negation whose exact result provably fits its type `no_wrap`, so that
//    the emitter writes plain arithmetic instead of wrapping through unsigned types;
//  - removes loops of extent <= 0, substitutes the variable of loops of extent 1 and lets bound to
//    constants, drops empty statements.
#pragma once
#include <map>
#include <string>

#include "lir/int_interval.h"
#include "lir/loop_ir.h"

namespace ekb::lir {

void simplify(Func& f);
// Without knowledge of the enclosing loops (variables have their type's range).
ExprP simplify(const ExprP& e);
// With the ranges of the variables in `known` (those of the loops around e).
ExprP simplify(const ExprP& e, const std::map<std::string, IntInterval>& known);
// The values an integer expression can take, given those of the variables in `known`.
IntInterval value_range(const ExprP& e, const std::map<std::string, IntInterval>& known);
StmtP simplify(const StmtP& s);

}  // namespace ekb::lir
