// The baseline every candidate is measured against (DESIGN §1): the workload compiled by this
// project's own compiler with its default schedule, as C source obeying the same ABI as a source
// solution, so that baseline and candidate take the same compile, load and timing path.
#pragma once
#include "ir/instance.h"
#include "runtime/backend.h"

namespace ekb::eval {

// The native compiler's C for `inst` (origin "native:default"). Throws std::runtime_error when the
// workload does not lower.
runtime::Source native_baseline(const ir::Instance& inst);

}  // namespace ekb::eval
