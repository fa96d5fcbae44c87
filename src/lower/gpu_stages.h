// What the gpu passes (map_grid_stride, outline_kernels, lower_thread_reductions) share: the
// properties of the kernel language they lower for, and the split of a function into stages,
// the units that become kernels.
#pragma once
#include <cstdint>
#include <set>
#include <vector>

#include "lir/loop_ir.h"

namespace ekb::lower {

// How a gpu target launches kernels and combines values between threads (lower_options_for gives
// each kernel language's, lower.h).
struct GpuLowerOptions {
  // A grid-stride kernel's blocks, and at most how many of them (the grid-stride loop covers the rest).
  int64_t threads_per_block = 256;
  int64_t max_blocks = 65535;
  // The launch is a description (OpenCL's `ekb-launch`, docs/ABI.md) that spells integers,
  // parameters, conversions between integer types, + - *, min and max only; otherwise host code
  // computes it from any expression of constants and parameters (CUDA).
  bool launch_description = false;
  // The types whose values the language exchanges between the lanes of a warp, and whether only
  // some of its device compilers can (a cooperative reduction then takes both forms, the device
  // compiler keeps one).
  std::set<ir::ScalarType> warp_shuffle_types;
  bool warp_shuffles_conditional = false;
};

// A gpu function as stages: the statements under the allocations and lets around its whole body
// (the context, which every kernel repeats as far as it uses it). When the context cannot be
// repeated (a temp outside the scratch workspace would not outlive its kernel; a let reading a
// buffer that the kernels write may differ between them) the whole body is one stage.
struct GpuStages {
  std::vector<lir::StmtP> context;  // Allocate and LetStmt, outermost first (each one's body is the next)
  std::vector<lir::StmtP> stages;

  // The function body: the context around the stages.
  lir::StmtP build() const;
};
GpuStages gpu_stages(const lir::Func& f);

}  // namespace ekb::lower
