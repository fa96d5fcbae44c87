// split(STAGE, loop, factor, outer, inner, tail=...) and tile(...): a loop becomes an outer loop
// over blocks of `factor` iterations and an inner loop within a block, in every copy of the loop.
// What happens when the factor does not divide the extent is the tail strategy:
//   guard          the last block runs only its valid iterations (`if (i < extent)` innermost)
//   shift_inwards  the last block is shifted back to end at the extent, so it recomputes some
//                  iterations: only for loops whose body is idempotent (a pure definition)
//   round_up       the last block runs whole: only where that stays in bounds, i.e. the factor
//                  divides the extent (otherwise it would write past the tensor's end)
//   peel           full blocks, then a separate tail loop over the remainder (as inner's copy)
//   mask           guard's loops, the guard on the SIMD lanes once the inner loop is vectorized
//                  (the inner loop, or one inside it, must be: vectorize(STAGE, inner, W), W
//                  dividing the factor); the cpu emitter prints such a guard as masked vector loads
//                  and stores, and runs the blocks where every lane is live unmasked
//                  (codegen/simd_loop.h). It computes nothing twice and touches nothing out of
//                  bounds, so it is legal where shift_inwards is not (read-modify-write outputs,
//                  reductions into the output); cpu only (a gpu has no lanes to mask).
// Every strategy keeps the original iteration order (shift_inwards aside), so splitting is legal
// on ordered and reduction loops too.
#pragma once
#include <optional>
#include <string>
#include <string_view>

#include "lir/loop_ir.h"

namespace ekb::lower {

enum class TailStrategy : uint8_t { Guard, ShiftInwards, RoundUp, Peel, Mask };
std::optional<TailStrategy> tail_strategy(std::string_view name);

void split(lir::Func& f, const std::string& stage, const std::string& loop, int64_t factor, const std::string& outer,
           const std::string& inner, TailStrategy tail = TailStrategy::Guard);

// Splits `loop` of `stage` by `factor` in place for vectorize/unroll: the outer loop keeps the
// name, the inner one (named `inner`, of kind `inner_kind`) runs the blocks; the tail is peeled,
// or with TailStrategy::Mask the last block runs whole, guarded (a masked vector). A loop already
// no longer than `factor` is marked `inner_kind` itself (with Mask: only one of exactly `factor`).
void split_for_kind(lir::Func& f, lir::Stage& stage, lir::StageLoop& loop, int64_t factor, const std::string& inner,
                    lir::ForKind inner_kind, TailStrategy tail = TailStrategy::Peel);

// Why a cpu schedule is unfinished ("" when it is not): a split with tail=mask with no vectorized
// loop at or inside its inner loop, so that its last block would run as guarded scalar iterations.
std::string masked_tail_problem(const lir::Func& f);

// tile(STAGE, x, y, fx, fy, xo, yo, xi, yi): split x and y, then reorder(xo, yo, xi, yi).
void tile(lir::Func& f, const std::string& stage, const std::string& x, const std::string& y, int64_t fx, int64_t fy,
          const std::string& xo, const std::string& yo, const std::string& xi, const std::string& yi,
          TailStrategy tail = TailStrategy::Guard);

}  // namespace ekb::lower
