// Helpers for the tests of the gpu passes (map_grid_stride, outline_kernels,
// lower_thread_reductions): lowering options like those of the gpu emitters, and a look at the
// statements they leave.
#pragma once
#include <string>
#include <vector>

#include "lir/mutator.h"
#include "lower/lower.h"

namespace ekb::lower::testing {

using namespace lir;

// A temp, a pure definition, an ordered update of it (each row reads the previous one) and an
// integer output: four stages.
inline const char* const kGpuStages = R"(
  params M, N
  input  x : f32[M, N]
  input  b : f32[N]
  output y : f32[M, N]
  output c : i32[M]
  temp   t : f32[N]
  t[j] = b[j] * 2.0
  y[i, j] = x[i, j] + t[j]
  for i in 1..M: y[i, j] = y[i - 1, j] + y[i, j]
  c[i] = cast(i32, i) + 1
)";

// The native lowering for cuda / opencl, stopped after the pass `stop`.
inline LowerOptions cuda_like_options(const std::string& stop) {
  LowerOptions o = lower_options_for(ir::Target::Cuda);
  o.stop_after = stop;
  return o;
}
inline LowerOptions opencl_like_options(const std::string& stop) {
  LowerOptions o = lower_options_for(ir::Target::OpenCL);
  o.stop_after = stop;
  return o;
}

// The statements of `body` that satisfy `pred`, in program order.
template <typename Pred>
std::vector<const Stmt*> find_stmts(const Stmt& body, Pred pred) {
  std::vector<const Stmt*> found;
  for_each_stmt(body, [&](const Stmt& s) {
    if (pred(s)) found.push_back(&s);
  });
  return found;
}

inline std::vector<const Stmt*> kernels_of(const Func& f) {
  return find_stmts(*f.body, [](const Stmt& s) { return s.kind == StmtKind::Kernel; });
}

// The For kinds of the loops in `body`, outermost first in program order: "i:gpu_grid_stride j:serial".
inline std::string loop_kinds(const Stmt& body) {
  std::string s;
  for_each_stmt(body, [&](const Stmt& x) {
    if (x.kind == StmtKind::For) s += (s.empty() ? "" : " ") + x.name + ":" + std::string(for_kind_name(x.for_kind));
  });
  return s;
}

}  // namespace ekb::lower::testing
