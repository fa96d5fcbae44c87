// Cooperative reductions (schedule_bind.h) made explicit in the kernels of a gpu function
// (outline_kernels). A loop bound to threads whose iterations update accumulators
// (thread_accumulators) becomes
//
//   let ekb_before<N>_acc = acc       what the accumulator held (an enclosing loop's running
//   acc = <identity>                  total, the same in every thread) joins the total at the end
//   for k in [...) gpu_thread.x {...} each thread its part
//   all_reduce.x ...                  the parts combined over the block's threads along the axis
//   acc = acc + ekb_before<N>_acc
//
// where N numbers the function's thread loops in program order. The combine's form follows the
// language (GpuLowerOptions): warp shuffles when the axis is x, the block's width along it a
// multiple of 32 and every accumulator's type one the language exchanges between lanes (both
// forms where only some device compilers can), a tree in shared memory otherwise. Its shared
// slots, ekb_red<N>_acc (one per thread for the tree, one per warp for the shuffles when there
// are several warps), are declared at the top of the kernel. Along an axis of one thread there
// is nothing to combine.
#pragma once
#include "lir/loop_ir.h"
#include "lower/gpu_stages.h"

namespace ekb::lower {

void lower_thread_reductions(lir::Func& f, const GpuLowerOptions& options);

}  // namespace ekb::lower
