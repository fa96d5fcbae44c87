// How the threads of a block share each cooperative copy into shared memory (a GpuCooperative
// nest, memory_cache.h) in a gpu function's kernels: the nest is named ekb_coop0, ekb_coop1, ...
// in program order, and copies four floats per load (a float4) where its copy `dst[...] =
// src[...]` is of f32 and its innermost loop runs over a multiple of 4 consecutive elements of
// src whose first one is provably 16-byte aligned (a multiple of 4, through the lets in scope);
// the stores are float4s too where they are consecutive and aligned the same way, else each of the
// four elements is stored at its own index. Stmt::CooperativeCopy records the choice.
#pragma once
#include "lir/loop_ir.h"

namespace ekb::lower {

void vectorize_cooperative_copies(lir::Func& f);

}  // namespace ekb::lower
