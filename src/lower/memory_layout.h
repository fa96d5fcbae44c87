// The memory layer's storage directives on cpu (docs/IR.md, "Schedule and memory layers"):
//   layout(T, pack(d, n))     dimension d split by n, the n innermost (NCHW -> NCHWc with d = 1);
//   layout(T, order(p...))    dimensions permuted: new dimension j is old dimension p_j.
//     An input is packed at kernel entry into a temp of the new layout (placed by plan_storage),
//     which every later read uses; a temp (or a cache buffer) changes its storage; an output keeps
//     the ABI's row-major layout: an error. A dimension not divisible by n is padded (never read).
//   align(T, bytes)           a temp or cache buffer allocated at that alignment; for an input or
//     output, an assumption the compiler may use (`__builtin_assume_aligned`), allowed up to the
//     64 bytes the harness guarantees (docs/ABI.md, runtime/tensor_arena.cpp).
#pragma once
#include <string>
#include <vector>

#include "lir/loop_ir.h"

namespace ekb::lower {

struct LayoutSpec {
  bool pack = false;          // pack(dims[0], factor); else order(dims...)
  std::vector<int64_t> dims;
  int64_t factor = 1;
};

void layout(lir::Func& f, const std::string& tensor, const LayoutSpec& spec);
void align(lir::Func& f, const std::string& tensor, int64_t bytes);

// nontemporal(y): the vectorized stores of output y stream past the caches (cpu): an output
// written once and read only after the kernel then costs no read for ownership of its lines and
// evicts nothing the kernel still reads. Only outputs (a temp is read back by the kernel itself).
void nontemporal(lir::Func& f, const std::string& tensor);

// prefetch(STAGE, loop, T, distance[, lines=N]): at the start of each iteration of the stage's
// loop, a software prefetch (cpu) of every element of T that the iteration reads, `distance`
// elements further on: the data of a later iteration (a later row) arrives while this one
// computes. The C emitter prefetches the cache lines the iteration's reads span, when they are at
// most 8, else the first; `lines=N` asks for N consecutive lines from each read's first element
// instead. Write it after the directives that split the loop.
void prefetch(lir::Func& f, const std::string& stage, const std::string& loop, const std::string& tensor,
              int64_t distance, int64_t lines = 0);

}  // namespace ekb::lower
