// double_buffer(As) on gpu: a shared cache filled at a sequential loop (the k loop of a GEMM) gets
// two buffers that alternate between the loop's iterations, so that each step issues the copy of
// the next step's panel before computing on the current one, and one barrier per step suffices:
//
//   for ko:                                     for ko:
//     copy As(ko)                                 if ko == first: copy As[0] (ko); barrier
//     barrier                         becomes     if ko + 1 < end: copy As[(ko + 1 - first) % 2] (ko + 1)
//     body reads As                               body reads As[(ko - first) % 2]
//     barrier                                     barrier
//
// The copy into the other buffer at step ko overwrites what step ko - 1 read, which the barrier
// ending step ko - 1 has finished; step ko + 1 reads it after the barrier ending step ko. Other
// caches of the same copy phase that are not double-buffered keep their copy and the barrier
// after it (the next panel's copy then follows that barrier). Refused: a cache that is not shared,
// one filled at a loop bound to blocks or threads (no next iteration in the same threads), or
// already double-buffered. On cpu apply_schedule refuses the directive before this pass.
#pragma once
#include <string>

#include "lir/loop_ir.h"

namespace ekb::lower {

void double_buffer(lir::Func& f, const std::string& cache);

}  // namespace ekb::lower
