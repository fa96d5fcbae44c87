// The GPU part of the schedule layer: bind(STAGE, loop, block.x|y|z or thread.x|y|z) (bind_loop)
// makes a loop's iterations the blocks or the threads of a block along one axis (For kinds
// GpuBlock / GpuThread, Stmt::gpu_axis), the way parallel makes them OpenMP threads. A top-level
// stage with bound loops becomes one kernel (outline_kernels.h) in the SPMD form: every thread of
// every block runs the stage's code, a block loop's variable is the block index, a thread loop's
// the thread index (guarded where its extent is below the block's size along that axis), and a
// cooperative copy into shared memory (memory_cache.h) is spread over all the threads of the block.
//
// The launch geometry derives from the bound loops: the grid from the block loops' extents, the
// block from the largest extent bound to each thread axis. gpu_kernel_geometry checks what makes
// such a kernel wrong or unlaunchable, each a ScheduleError naming the loop or cache:
//  - bind: the loop must run its iterations at once (a pure loop, or a free/ordered loop without
//    dependences between iterations); reductions need rfactor first; a loop is bound once.
//  - block loops lead their stage (only lets above them), one per axis; thread loops sit inside
//    them, never inside a loop bound to the same thread axis; extents are constants within the
//    device's limits (threads per block, block and grid dimensions).
//  - in a stage with thread loops, a store outside them (and outside cooperative copies) would run
//    in every thread of the block: refused unless it writes a buffer private to the thread; a
//    buffer private to each thread but allocated outside the thread loops must not be written
//    inside them (each thread would fill only its own part of its own copy).
//  - a barrier or a cooperative copy must be reached by every thread of the block: not under a
//    condition or a loop bound that differs between threads, nor inside a thread loop whose extent
//    is below the block size (its guard).
//  - shared memory per block within kMaxSharedBytes.
//
// A cooperative reduction: bind(C, k, thread.x|y|z) on a reduction loop k (of C, or of an rfactor
// stage) spreads k's iterations over the threads along that axis, each accumulating a partial
// result in its own copy of the accumulator; after the loop they combine the partials
// (lower_thread_reductions.h: a tree in shared memory between barriers, or warp shuffles where the
// axis is x and the block's width a multiple of 32) and every thread ends with the whole reduction, so
// that the code after the loop (the stage's store, or the stages computed at the same block loop
// with compute_at) runs on the same value in every thread. Legality: the loop must accumulate into
// scalar accumulators only (`acc = acc OP e` with OP a sum, product, min or max, acc not read
// otherwise: argmax/argmin keep an index beside the value), store nothing but buffers allocated
// inside it, and be reached by every thread of the block (its combine has barriers). A store
// outside the thread loops of a value that is the same in every thread (the combined result) is
// written once, by the block's first thread; other such stores are refused as before.
#pragma once
#include <array>
#include <string>

#include "lir/loop_ir.h"

namespace ekb::lower {

// Limits every CUDA device of compute capability >= 3 has (and OpenCL devices usually do): static
// shared memory per block, threads per block, block and grid dimensions.
inline constexpr int64_t kMaxSharedBytes = 48 << 10;
inline constexpr int64_t kMaxThreadsPerBlock = 1024;
inline constexpr std::array<int64_t, 3> kMaxBlockDim = {1024, 1024, 64};
inline constexpr std::array<int64_t, 3> kMaxGridDim = {2147483647, 65535, 65535};
// Registers per thread (255 of 4 bytes): the most a `local` cache may hold on gpu.
inline constexpr int64_t kMaxGpuRegisterBytes = 1020;

void bind_loop(lir::Func& f, const std::string& stage, const std::string& loop, const std::string& target);

// An accumulator of a cooperative reduction: a variable declared outside the loop, updated inside
// it as `var = var OP value` (OP: Add, Mul, Min or Max).
struct ThreadAccumulator {
  std::string var;
  ir::ScalarType type = ir::ScalarType::F32;
  lir::BinOp op = lir::BinOp::Add;
};
// The accumulators that the iterations of `loop` update (empty for a loop of independent
// iterations); ScheduleError when an update is not one a tree over threads can combine.
std::vector<ThreadAccumulator> thread_accumulators(const lir::Stmt& loop);

// Whether s holds a loop bound to blocks or threads (a stage the GPU emitters launch as bound).
bool has_gpu_bound_loops(const lir::Stmt& s);
// The launch of top-level stage `stage`, after checking it as described above (ScheduleError).
lir::KernelGeometry gpu_kernel_geometry(const lir::Func& f, const lir::Stmt& stage);
// After a gpu schedule (apply_schedule calls it): temps allocated between stages (rfactor's) moved
// to the root, so that each stage is a top-level statement (a kernel); then every stage with bound
// loops checked as gpu_kernel_geometry does.
void finish_gpu_schedule(lir::Func& f);

// The loops enclosing the For of `var` under root, outermost first (empty when it is not there).
std::vector<const lir::Stmt*> enclosing_loops(const lir::Stmt& root, const std::string& var);

}  // namespace ekb::lower
