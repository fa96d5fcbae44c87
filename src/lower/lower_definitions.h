// The first lowering pass: a verified workload's compute layer as loop nests (docs/IR.md,
// "Statements: pure definitions and ordered updates").
//  - A pure definition becomes a loop nest over the tensor's full extent, first index outermost.
//  - Updates become their ordered loops (`for` ranges, first outermost, bounds evaluated at loop
//    entry); free left-hand-side variables loop innermost over the full extent, in index order.
//  - Temps are allocated around the whole body (scope Global, placed later by plan_storage).
//  - Params and lets become constants: the default lowering is specialized to the workload.
//  - Types are explicit: an operand whose type differs from its operator's (an integer mixed with
//    index) is wrapped in a Cast; literals take the type the verifier gave them.
//  - Every stage (pure definition "C", update "C.update(N)") is recorded in Func::stages with its
//    loops' IR names, roles and For variables, for the schedule passes.
//  - Reductions stay Reduce expressions and tensor reads keep their boundary (pad/edge/mirror) and
//    one index per dimension, for lower_reductions, lower_boundaries and flatten_storage.
#pragma once
#include "ir/instance.h"
#include "lir/loop_ir.h"

namespace ekb::lower {

lir::Func lower_definitions(const ir::Instance& inst);

// Names an emitter cannot give a variable: keywords and library names of C, C++, CUDA and OpenCL,
// and the ABI's own names. lower_definitions reserves them so that fresh names avoid them.
const std::set<std::string>& reserved_identifiers();

}  // namespace ekb::lower
