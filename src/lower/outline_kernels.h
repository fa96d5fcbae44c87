// A gpu function as kernels launched in program order: its body becomes a Block of Kernel
// statements, each with its launch and the part of the context of the stages (gpu_stages) that it
// uses. Kernels are named ekb_kernel_0, ekb_kernel_1, ... in launch order.
//  - A stage with loops bound to blocks and threads (schedule_bind.h) is one kernel with the launch
//    geometry they give (LaunchKind::Grid), in the SPMD form: every thread runs the stage, a bound
//    loop's variable being the block's or the thread's index. Its shared memory is declared at the
//    kernel's top (it lives for the whole kernel, and OpenCL allows no other place); where it has
//    thread loops, a store outside them and outside cooperative copies to a buffer that is not the
//    thread's own is made by the block's first thread (every thread holds the same value there:
//    schedule_bind checked it).
//  - A stage led by GpuGridStride loops (map_grid_stride) is one kernel launched over their
//    iterations (LaunchKind::GridStride).
//  - Consecutive stages with neither run in one kernel on a single thread (LaunchKind::Single).
#pragma once
#include "lir/loop_ir.h"
#include "lower/gpu_stages.h"

namespace ekb::lower {

void outline_kernels(lir::Func& f, const GpuLowerOptions& options);

}  // namespace ekb::lower
