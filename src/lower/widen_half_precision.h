// f16 and bf16 are storage formats on the cpu: values are loaded to f32, computed in f32 and
// rounded back only when stored into a half buffer. After this pass the only half-typed
// expressions are Loads of half buffers (wrapped in a Cast to f32) and the Casts to half that feed
// Stores; a Cast to a half type inside an expression becomes a no-op, since the reference does not
// round there either. (A GPU target with native half arithmetic may skip this pass.)
//
// Intermediates stay f32 unless `keep_half_temps`: temps declared half are kept in f32, and a half
// output that the kernel also reads (a later stage uses it, or updates accumulate into it) is
// computed in an f32 shadow temp and rounded into the output once, at the end. The reference never
// rounds intermediates, and rounding them to f16 fails the f16 tolerance on suite workloads (an f16
// image coordinate above 256 has no fractional bits left; f16 attention scores lose ~0.4% in exp; a
// residual stream rounded after every layer drifts). The ABI leaves intermediates to the kernel.
#pragma once
#include "lir/loop_ir.h"

namespace ekb::lower {

void widen_half_precision(lir::Func& f, bool keep_half_temps = false);

}  // namespace ekb::lower
