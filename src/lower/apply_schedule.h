// Applies a module's schedule layer to the loop IR, directive by directive in file order
// (docs/IR.md, "Schedule and memory layers"): `schedule cpu { ... }` / `memory cpu { ... }` blocks
// and blocks without a target when lowering for cpu; `schedule gpu` / `memory gpu` blocks and
// those without a target when lowering for a gpu target (cuda, opencl). Each directive is one row
// of the directive table (ir/directives.h: its arguments, targets and the pass that applies it)
// and one pass of its own file; apply_schedule.cpp maps each verb to that pass's entry function.
// Legality comes from lower/schedule_loops.h (stages, loops, dependences) and bounds from
// lower/region.h; bind's kernels are checked as a whole after the last directive.
// Runs between lower_reductions (reduction loops exist as loops) and flatten_storage (accesses
// still name tensor dimensions). A directive that is illegal, or has no meaning on the target
// (its row's targets; the shared scope on cpu), throws ScheduleError whose message is
// "file:line:col: error: 'DIRECTIVE': why" plus a hint line.
#pragma once
#include <string>
#include <vector>

#include "ir/ast.h"
#include "ir/target.h"
#include "lir/loop_ir.h"

namespace ekb::lower {

void apply_schedule(lir::Func& f, const ir::Module& m, ir::Target target = ir::Target::Cpu);

// The verbs apply_schedule has a pass for: every verb of ir::directive_table() (a test holds them
// equal).
std::vector<std::string> directive_pass_verbs();

}  // namespace ekb::lower
