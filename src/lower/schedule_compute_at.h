// Where a producer stage is computed relative to its consumers (docs/IR.md, "Schedule and memory
// layers"). A producer is a temp's pure definition; by default it is computed at root, over its
// whole extent, before the statements that read it.
//   compute_at(P, C, x)  P's nest moves into C's loop x: each iteration computes the box of P that
//                        the loop body reads (region.h's bounds inference), into a buffer of the
//                        box's size allocated there (P's storage moves with it, indices made
//                        relative to the box). Legal when every read of P is under x (a copy of
//                        it), P's nest still runs over its full extent (not split yet: schedule P
//                        after placing it), and nothing between P's old place and x writes what P
//                        reads. In a parallel loop the buffer is per thread (kMaxPrivateBytes).
//   compute_inline(P)    every read of P becomes P's defining expression at the read's indices;
//                        legal for a definition that is one store (no reduction accumulator).
//   compute_root(P)      the default placement: a no-op for a stage at root, an error after an
//                        earlier directive moved it (directives apply in order, none undoes another).
#pragma once
#include <string>

#include "lir/loop_ir.h"

namespace ekb::lower {

void compute_at(lir::Func& f, const std::string& producer, const std::string& consumer, const std::string& loop);
void compute_inline(lir::Func& f, const std::string& producer);
void compute_root(lir::Func& f, const std::string& producer);

}  // namespace ekb::lower
