// fuse(STAGE, outer, inner, fused): two directly nested loops become one over the product of
// their extents (outer = fused / extent(inner), inner = fused % extent(inner)), in every copy.
// Iterations run in the same order, so fusing is legal on any loops, provided the inner loop's
// bounds do not depend on the outer one. The fused loop's role: independent when both were
// (pure/free), otherwise the carried role (ordered, reduction). A pure loop and a reduction loop
// do not fuse: the reduction's initialization nest has no reduction loop to fuse with.
#pragma once
#include <string>

#include "lir/loop_ir.h"

namespace ekb::lower {

void fuse(lir::Func& f, const std::string& stage, const std::string& outer, const std::string& inner,
          const std::string& fused);

}  // namespace ekb::lower
