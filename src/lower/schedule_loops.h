// What the schedule passes (schedule_*.h, applied by apply_schedule.h) share: finding a stage and
// its loops by name (Func::stages), perfect loop nests ("chains") taken apart and rebuilt, fresh
// copies of loops, and the dependence facts that decide whether a transformation is legal.
//
// compute_at and the memory layer (region.h, memory_*.h) find loops the same way: a stage's loops
// by name, their For variables in every copy, and the chain helpers.
#pragma once
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "lir/loop_ir.h"
#include "lower/schedule_error.h"

namespace ekb::lower {

// The stage / its loop of that name; throws ScheduleError naming the candidates.
lir::Stage& stage_named(lir::Func& f, const std::string& name);
lir::StageLoop& loop_named(lir::Stage& s, const std::string& name);

// s with the For of each variable in `vars` replaced by rewrite(that For); a rewritten loop's
// result is not searched again.
lir::StmtP rewrite_loops(const lir::StmtP& s, const std::vector<std::string>& vars,
                         const std::function<lir::StmtP(const lir::Stmt&)>& rewrite);
// The statement (a For, a let, an allocation...) with another body.
lir::StmtP with_body(const lir::Stmt& loop, lir::StmtP body);

// A perfect loop nest: its For nodes, outermost first (their bodies are not used), the guards met
// between them (an `if` without else that is a loop's whole body, as guarded splits leave) and
// the innermost body.
struct LoopChain {
  std::vector<lir::StmtP> loops;
  std::vector<lir::ExprP> guards;
  lir::StmtP body;

  int position(const std::string& var) const;  // -1 when absent
  // The nest rebuilt, guards innermost: they read only loop variables, so evaluating the bounds of
  // the loops they enclosed first is harmless.
  lir::StmtP build() const;
};
LoopChain loop_chain(const lir::StmtP& top);

// `chain`'s loops under fresh variable names around `body` (which may use the old names), each
// recorded as a new copy of its stage loop.
LoopChain fresh_copy(lir::Func& f, const LoopChain& chain, const lir::StmtP& body);

// Why the iterations of `loop` may not run in any order or at once ("" when they may): the body
// updates a scalar declared outside it, or accesses a buffer it writes at more than one element
// per iteration, or writes one element from every iteration.
std::string independence_problem(const lir::Stmt& loop);
// The same for an ordered loop (an update's `for` range), whose statement may also store to one
// element from several iterations (y[i / 2] in a loop over i), unlike a pure or free loop's,
// whose written index is the loop's variable itself.
std::string ordered_independence_problem(const lir::Func& f, const lir::Stmt& loop);
// Why running some iterations of `loop` a second time would change the results ("" when it would
// not): the body reads a buffer or scalar that it writes.
std::string idempotence_problem(const lir::Stmt& loop);

// Scalars assigned in s that s does not declare: state carried from one execution of s to the next.
std::vector<std::string> outer_scalars_assigned(const lir::Stmt& s);
// The buffers allocated under s (private to the code that allocates them).
std::set<std::string> allocated_under(const lir::Stmt& s);

// The loop's extent when it is a constant (after folding).
std::optional<int64_t> constant_extent(const lir::Stmt& loop);
lir::ExprP conjunction(const std::vector<lir::ExprP>& conditions);  // nullptr when empty

}  // namespace ekb::lower
