// rfactor(STAGE, r, rf): a parallel reduction through a partial-result stage (Halide's rfactor).
// The reduction loop r of a pure definition becomes the pure loop rf of a new stage named rf,
// which computes, for every element of STAGE and every value of r, the reduction over STAGE's
// other reduction loops into a temp; STAGE then reduces over rf, reading the partial results:
//
//   C[i] = sum(k: x[i, k])  with split(C, k, 64, ko, ki); rfactor(C, ko, kf)
//   ->  kf:  P[i, kf] = sum(ki: x[i, kf * 64 + ki])    (loops i, kf pure; ki reduction)
//       C:   C[i] = sum(kf: P[i, kf])
//
// The partial stage's loops keep their names (pure ones and the remaining reduction loops), so
// parallel(kf, kf) or vectorize(kf, i, 8) schedule it. Only associative, commutative reductions
// (sum, prod, max, min; floating-point reassociation allowed) and only a statement's first
// reduction, directly inside its pure loops (before any reorder moves it out).
#pragma once
#include <string>

#include "lir/loop_ir.h"

namespace ekb::lower {

void rfactor(lir::Func& f, const std::string& stage, const std::string& loop, const std::string& partial);

}  // namespace ekb::lower
