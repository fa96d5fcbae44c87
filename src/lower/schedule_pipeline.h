// pipeline(C, x, P, l): software pipelining across the iterations of a serial loop (cpu).
//
// In each iteration of C's loop x, the producers computed at x (compute_at) run first and C's own
// loop nest last, so a thread alternates between computing (P's loop) and storing (C's loop). After
// pipeline, iteration i runs the producers for i and C's nest for i - 1, C's loop fused into P's
// loop l element by element, so that C's stores stream out while P computes:
//
//   for x in [0, n):                        for x in [0, n + 1):
//     m(x); for l: e(x, l)                    if x < n: m(x)
//     s(x)                           ->       for l: { if x < n: e(x, l)    if x > 0: y(x - 1, l) }
//     for c: y(x, c)                          if x < n: s(x)
//
// (the conditions on x > 0 and x < n are tested once, outside l: the iterations between the first
// and the last run the fused loop without them, those two run P's loop or C's alone).
//
// The temps that C reads and the producers write at x (e and s above) get two slots, indexed by
// x % 2, allocated around the loop: iteration i writes slot i % 2 while C reads slot (i - 1) % 2.
// Softmax is the model: the exponentials of row i computed while row i - 1 is written.
//
// Legal when x is a serial loop (its iterations run in order: split the parallel loop and pipeline
// the inner one) that exists once, C's nest is one loop in x's body, under nothing but lets (none
// of them a load that C reads) and allocations, with the constant range of P's loop l, P's loop l
// is in x's body under nothing but lets, allocations and loops of one iteration, the producers do
// not read C's tensor, C writes nothing else that outlives its nest, and nothing the producers write
// outside x's body is read by C. A condition around the whole body (a split after compute_at, with
// tail=guard) guards each half at its own iteration.
#pragma once
#include <string>

#include "lir/loop_ir.h"

namespace ekb::lower {

void pipeline(lir::Func& f, const std::string& consumer, const std::string& loop, const std::string& producer,
              const std::string& producer_loop);

}  // namespace ekb::lower
