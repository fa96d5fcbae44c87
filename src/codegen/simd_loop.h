// Vectorized loops printed as explicit SIMD code. A `vectorize` directive makes a loop of the SIMD
// width (For kind Vectorized, constant extent). Left as a loop with a vectorize pragma, clang
// vectorizes it late, after the passes that keep small arrays in registers (SROA) have run, so a
// `local` cache accessed inside it — a GEMM's accumulator tile — stays in memory, loaded and stored
// around every multiply-add. Printed instead as straight-line code on W-lane values (GCC vector
// extensions), every access to the cache has a constant offset once clang fully unrolls the
// enclosing `unroll` loops, and the cache is promoted to vector registers.
//
// A loop qualifies when its body is stores, lets, blocks, ifs on lane-independent conditions or
// on a masked tail's lane limit (below),
// inner loops with lane-independent bounds (a stencil's taps), prefetches (made at the first
// lane's element) and variables of its own (their accumulators: one vector each) over one float
// element type, every access of which is either
// the same element in every lane (uniform: printed as a scalar, broadcast where it meets a
// vector) or consecutive elements, one per lane (index = base + lane: a vector load or store), and
// every lane-dependent value is built from loads, + - * /, min, max, negation, select on a uniform
// condition and the vector math calls of has_vector_call. Anything else (gathers, other math
// calls, conversions, an assignment to a variable from outside, a store all lanes make to one
// element) keeps the pragma loop.
#pragma once
#include <optional>
#include <set>
#include <string>

#include "lir/loop_ir.h"

namespace ekb::codegen {

// The guard of a masked tail (split or vectorize with tail=mask), `index < end` with the lane's
// coefficient 1 in index and end the same in every lane: the lanes that run are a prefix, the
// first end - index (index at the first lane), so the body runs as masked vector code.
struct LaneLimit {
  lir::ExprP index, end;
  lir::ExprP uniform;  // the rest of a conjunction (simplify merges nested guards), or null
};

struct SimdLoop {
  std::string lane;          // the loop's variable
  int64_t width = 0;         // lanes
  ir::ScalarType element{};  // f32 or f64
  // Lets of the body whose value depends on the lane, and the body's own variables (each one a
  // vector).
  std::set<std::string> varying_lets;

  // Whether e depends on the lane (through the loop variable or a varying let).
  bool varies(const lir::Expr& e) const;
  // A lane-dependent condition as a lane limit, or nullopt.
  std::optional<LaneLimit> lane_limit(const lir::Expr& condition) const;
};

// Whether a call has an explicit vector form in these lanes: exp of 16 floats, glibc's libmvec
// _ZGVeN16v_expf where the target has AVX-512. clang 14 maps expf to libmvec only 8 lanes wide
// (-fveclib=libmvec), and a 16-lane pragma loop calls the scalar expf 16 times; the 16-lane one
// takes 0.22 ns an element against 0.32 ns for the 8-lane one (measured on the 2-core Xeon).
bool has_vector_call(const lir::Expr& call, const SimdLoop& lanes);

// The loop as explicit SIMD code, or nullopt with the reason in `why` (when given).
std::optional<SimdLoop> simd_loop(const lir::Stmt& loop, std::string* why = nullptr);

}  // namespace ekb::codegen
