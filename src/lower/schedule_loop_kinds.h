// parallel(STAGE, loop), vectorize(STAGE, loop, width), unroll(STAGE, loop, n): how a loop runs,
// recorded as its For kind (the emitters print it: OpenMP threads, SIMD, unrolled code; a GPU
// binder uses the same nests).
//  - parallel and vectorize run iterations at once, so they need iterations without dependences:
//    a pure loop, or an update's free loop whose statement touches its tensor only at the element
//    it writes, or an update's ordered loop whose iterations store to different elements and read
//    nothing another iteration writes (the spatial loops of a Jacobi time step; not those of an
//    in-place Gauss-Seidel sweep or a scan). Reduction loops carry dependences (use rfactor to
//    parallelize a reduction); so does a loop whose body updates an accumulator declared outside it.
//  - vectorize splits the loop by `width` (the outer part keeps the name, the SIMD lanes become the
//    loop "NAME.vector", the remainder is peeled, or with tail=mask run as one masked vector);
//    unroll likewise by `n` ("NAME.unrolled").
//    Unrolling keeps the order, so it is legal on any loop.
#pragma once
#include <string>

#include "lir/loop_ir.h"
#include "lower/schedule_split.h"

namespace ekb::lower {

void parallelize(lir::Func& f, const std::string& stage, const std::string& loop);
// `tail`: Peel (the default) runs the remainder as scalar iterations; Mask as one more vector of
// `width` lanes, guarded lane by lane (masked loads and stores in the cpu emitter).
void vectorize(lir::Func& f, const std::string& stage, const std::string& loop, int64_t width,
               TailStrategy tail = TailStrategy::Peel);
void unroll(lir::Func& f, const std::string& stage, const std::string& loop, int64_t factor);

// Why `loop` of `stage` may not run its iterations at once ("" when it may): for parallel,
// vectorize, and a GPU binder.
std::string concurrency_problem(const lir::Func& f, const lir::Stage& stage, const lir::StageLoop& loop);

}  // namespace ekb::lower
