// The prefetch directive's software prefetches (Stmt::prefetches of a cpu loop) as Prefetch
// statements at the start of each iteration of their loop: for each read of the tensor in the
// loop's body, taken where the loops inside the body start (an explicit SIMD loop's first lane),
// the element `distance` further on. The cache lines between where those inner loops start and
// where they end are prefetched too when they are at most kMaxPrefetchLines apart (an unrolled
// body's vectors); a longer span (an inner loop over a row, a stencil's rows) keeps the first
// line only, the rest left to the hardware prefetcher. prefetch's lines=N asks for N lines from
// the first element instead. A line already prefetched for another read is not repeated.
#pragma once
#include <cstdint>

#include "lir/loop_ir.h"

namespace ekb::lower {

inline constexpr int64_t kCacheLineBytes = 64;
inline constexpr int64_t kMaxPrefetchLines = 8;

void insert_prefetches(lir::Func& f);

}  // namespace ekb::lower
