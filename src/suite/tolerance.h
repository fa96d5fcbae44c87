// The per-type tolerance of the correctness check (docs/EVALUATION.md §4), in one place so
// that the harness, the task statement and the docs agree. Part of the suite, the benchmark's
// definition: what a solution of a workload must meet, which eval (above the suite) checks.
//
// An output element passes when |out - ref| <= rtol * |ref| + atol_rms * rms(ref), where rms(ref)
// is the root mean square of the whole reference output (so an all-zero or constant output cannot
// pass on random inputs), and NaN/inf must match exactly. Integer outputs must be exact.
#pragma once
#include "ir/types.h"

namespace ekb::suite {

struct Tolerance {
  double rtol = 0;
  double atol_rms = 0;
  bool exact() const { return rtol == 0 && atol_rms == 0; }
};

inline Tolerance tolerance_for(ir::ScalarType t) {
  switch (t) {
    case ir::ScalarType::F64: return {1e-9, 1e-10};
    case ir::ScalarType::F32: return {1e-3, 1e-4};
    case ir::ScalarType::F16: return {1e-2, 1e-3};
    case ir::ScalarType::BF16: return {2e-2, 4e-3};
    default: return {0, 0};
  }
}

}  // namespace ekb::suite
