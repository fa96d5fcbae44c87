// The memory layer's caches on cpu (docs/IR.md, "Schedule and memory layers"):
//   cache_read(A, C, x, scope, As)   each iteration of C's loop x first copies the box of A that
//                                    its body reads (region.h's bounds inference) into As, sized
//                                    for the box and allocated there, and the body reads As.
//                                    Refused when the body also writes A (the copy would go stale).
//   cache_write(C, x, scope, Cl)     C's accesses to its tensor under x go to Cl, the box they touch;
//                                    after the body, Cl is written back. The box is first loaded
//                                    from the tensor unless the body's first access to it is a
//                                    store-only nest over the whole box (an initialization), so
//                                    that elements the body reads or leaves alone keep their values.
//                                    This keeps a GEMM's accumulator tile in registers.
// Scopes on cpu: `local` (registers: a small local array the compiler can keep in registers,
// at most kMaxRegisterBytes), `tile` and `global` (plan_storage places them: a local array when
// small or inside a parallel loop, else the scratch workspace); `shared` is GPU memory: an error.
// On gpu, cache_read(A, C, x, shared, As) holds the box that all the threads of the block read
// under x (the thread loops around x relaxed): x must be inside a loop bound to blocks, the copy
// nest (kind GpuCooperative) is spread over the block's threads, a barrier follows it and another
// ends x's body (before the next iteration's copy overwrites the tile); caches at the same loop
// share one copy phase and its barriers.
#pragma once
#include <string>

#include "lir/loop_ir.h"

namespace ekb::lower {

inline constexpr int64_t kMaxRegisterBytes = 2048;  // 32 AVX-512 registers

// `gpu`: the schedule is for a gpu backend, where scope `shared` exists (cache_read only) and
// `local` holds at most kMaxGpuRegisterBytes (schedule_bind.h).
void cache_read(lir::Func& f, const std::string& tensor, const std::string& consumer, const std::string& loop,
                const std::string& scope, const std::string& cache, bool gpu = false);
void cache_write(lir::Func& f, const std::string& stage, const std::string& loop, const std::string& scope,
                 const std::string& cache, bool gpu = false);

}  // namespace ekb::lower
