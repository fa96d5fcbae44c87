// f16 and bf16 are storage formats on the cpu: values are loaded to f32, computed in f32 and
// rounded back only when stored (so temps declared f16 are stored as f16). After this pass the
// only half-typed expressions are Loads of half buffers (wrapped in Cast to f32) and the Casts
// to half that feed Stores; a Cast to a half type inside an expression becomes a no-op, since
// the reference does not round there either.
// (A GPU target with native half arithmetic may skip this pass.)
#pragma once
#include "lower/loop_ir.h"

namespace ekb::lir {

void widen_half_precision(Func& f);

bool is_half(ScalarType t);  // f16 or bf16

}  // namespace ekb::lir
