// The default mapping of a gpu function's loops to threads: in each stage (gpu_stages) that the
// schedule did not bind to blocks and threads (schedule_bind.h), the outermost loops whose
// iterations are independent (pure loops, LoopRole::Pure) become GpuGridStride loops, one
// iteration space spread over all the threads of their kernel's launch; everything inside them
// (reductions, ordered updates, inner loops) runs sequentially in each thread. The mapping stops
// at a loop whose bounds the launch cannot compute (they read a buffer or a variable other than a
// parameter; with a launch description, an operation it cannot spell) and at one whose body
// allocates storage that all threads would share. A stage with no such loop runs on one thread
// (outline_kernels).
#pragma once
#include "lir/loop_ir.h"
#include "lower/gpu_stages.h"

namespace ekb::lower {

void map_grid_stride(lir::Func& f, const GpuLowerOptions& options);

}  // namespace ekb::lower
