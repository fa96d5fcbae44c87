// Places each temp allocation that no directive has placed (scope Global): small ones become
// local arrays on the stack, larger ones go to the scratch workspace the kernel declares through
// the ABI (`ekb_scratch_bytes`, docs/ABI.md "Scratch memory"), since a kernel may not allocate
// memory behind the harness's back and the stack is small.
// Scratch offsets are 64-byte aligned (an align directive's larger alignment is made at run time
// in room reserved for it); temps do not share space (every temp lives for the whole kernel in the
// default lowering). A temp allocated inside a parallel loop (compute_at, cache_read, cache_write)
// is a local array of each thread, whatever its size: the schedule passes bound it
// (region.h, kMaxPrivateBytes).
#pragma once
#include "lir/loop_ir.h"

namespace ekb::lower {

struct StoragePlanOptions {
  int64_t max_stack_bytes = 4096;  // per temp
};

void plan_storage(lir::Func& f, const StoragePlanOptions& options = {});

}  // namespace ekb::lower
