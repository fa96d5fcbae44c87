// The GPU-generic half of the CUDA and OpenCL emitters: how a lowered function becomes kernels and
// launches, independent of the language they are spelled in. A language subclass (CudaEmitter,
// OpenCLEmitter) supplies kernel heads, thread indices, the launch text and storage types; this
// base decides what each kernel runs.
//
// The default GPU schedule: each top-level statement of the loop IR (a stage) becomes one kernel,
// launched in program order. The outermost loops of a stage that are pure (independent iterations,
// lir::LoopRole::Pure) are flattened into one iteration space spread over all threads with a
// grid-stride loop; everything inside them (reductions, ordered updates, inner loops) runs
// sequentially in each thread. A stage with no such loop runs on a single thread (consecutive ones
// share a kernel). The allocations and lets around the whole body (the context) are repeated in
// every kernel that uses them; temps live in the scratch workspace (device memory), since a
// stage's result must outlive its kernel.
//
// Schedule directives for GPUs (bind to blocks/threads, shared memory, barriers) belong here too:
// they change what a kernel runs, not how a language spells it.
#pragma once
#include <map>
#include <set>
#include <string>
#include <vector>

#include "codegen/c_emitter.h"
#include "lower/schedule_bind.h"

namespace ekb::codegen {

class GpuEmitter : public CEmitter {
 public:
  GpuEmitter(const lir::Func& f, CEmitOptions options) : CEmitter(f, std::move(options)) {}

 protected:
  // nvcc, NVRTC, clang (PoCL) and NVIDIA's OpenCL (cl_nv_pragma_unroll) all take it: a register
  // tile's loops must be unrolled for the tile to stay in registers.
  std::string loop_annotation(const lir::Stmt& loop) const override {
    return loop.for_kind == lir::ForKind::Unrolled ? "#pragma unroll" : "";
  }
  // ---- language hooks
  // A kernel's definition up to its opening "{\n", after a comment saying `what` it runs.
  virtual std::string kernel_head(const std::string& name, const std::string& what) const = 0;
  // The index of the calling thread in the whole launch, and the number of threads launched
  // (64-bit integer expressions in device code).
  virtual std::string global_thread_index() const = 0;
  virtual std::string global_thread_count() const = 0;
  // How the language calls its threads, for comments ("blocks and threads").
  virtual std::string thread_space_name() const = 0;
  // The text launching kernel `name` over the product of a grid-stride launch's extents (each
  // clamped at 0), or on a single thread.
  virtual std::string launch_over(const std::string& name, const lir::Launch& launch) = 0;
  virtual std::string launch_single_thread(const std::string& name) = 0;

  // ---- kernels of stages with loops bound to blocks and threads (lower/schedule_bind.h)
  // The block's index, and the thread's index within its block, along axis 0, 1, 2 (x, y, z).
  virtual std::string block_index(int axis) const = 0;
  virtual std::string thread_index(int axis) const = 0;
  // The statement making the threads of a block wait for each other (shared memory visible).
  virtual std::string barrier_statement() const = 0;
  // The declaration of a shared-memory buffer at the top of a kernel.
  virtual std::string shared_declaration(const lir::Stmt& alloc) const = 0;
  // The text launching kernel `name` with that geometry.
  virtual std::string launch_geometry(const std::string& name, const lir::KernelGeometry& g) = 0;
  // Four consecutive floats of `buffer` from element `index` (a multiple of 4) as one float4
  // lvalue; `shared`: the buffer is in shared memory; `writable`: stored to.
  virtual std::string float4_at(const std::string& buffer, const std::string& index, bool shared,
                                bool writable) const = 0;
  // `value` (a variable of type t) of the thread whose lane index in its warp is this one's xor
  // `lane_mask`, every lane of the warp taking part; "" where the language has no such exchange
  // (OpenCL C 1.2) or not for type t: cooperative reductions then combine through shared memory.
  virtual std::string warp_exchange(const std::string& value, ScalarType t, int lane_mask) const { return ""; }
  // The preprocessor condition under which warp_exchange is available ("" where it always is): the
  // reduction is then emitted both ways, shuffles under the condition and the tree otherwise.
  virtual std::string warp_exchange_condition() const { return ""; }

  // Prints loops bound to blocks and threads, cooperative copies, barriers and shared allocations
  // (only inside a bound kernel); the rest as the C emitter does.
  void stmt(const lir::Stmt& s, int indent) override;
  // Vectorized loops stay loops: GCC vector types are a C-on-cpu feature.
  bool explicit_simd() const override { return false; }

  std::string entry_body() override;
  // The kernels printed so far, in launch order.
  const std::string& kernels() const { return kernels_; }

  // The thread's rank in its block as one operand.
  std::string thread_rank_expression() override;

 private:
  // A Kernel: its definition appended to kernels_, its launch to the entry point's body.
  void kernel(const lir::Stmt& kernel);
  // A nest of GpuGridStride loops flattened into one loop over all the threads of the launch.
  void grid_stride_nest(const lir::Stmt& nest, int indent);
  // A nest of GpuCooperative loops flattened and spread over the block's threads.
  void cooperative_nest(const lir::Stmt& nest, int indent);
  // The cooperative copy `dst[...] = src[...]` four floats at a time, when its innermost loop
  // runs over a multiple of 4 contiguous, 16-byte aligned elements of src (the stores too when
  // they are contiguous). Returns false (printing nothing) otherwise.
  bool vectorized_copy(const std::vector<const lir::Stmt*>& loops, const lir::Stmt& copy, int indent,
                       const std::string& rank, const std::string& prefix);
  // The loop of a cooperative copy that gives its thread the elements `rank`, rank + threads, ...
  // of `count` (text) as PREFIX_flat: when the count is a known constant, a fixed number of turns
  // unrolled, so that each thread issues all its loads before their stores wait for them.
  void open_cooperative_turns(const std::string& prefix, const std::string& rank, const std::string& count,
                              std::optional<int64_t> constant_count, const std::string& pad);
  // The largest power of two (up to 16) that `e` is provably a multiple of, through the lets met.
  int64_t known_multiple(const lir::Expr& e) const;
  // A loop bound to threads: its variable the thread's index, guarded where the block is wider.
  void thread_loop(const lir::Stmt& loop, int indent);
  // A ThreadAllReduce in its form (lower_thread_reductions): warp shuffles (axis x, a multiple of
  // 32 threads), a tree in shared memory, or both under warp_exchange_condition().
  void all_reduce(const lir::Stmt& reduce, int indent);
  void combine_by_shuffles(const std::vector<lir::Stmt::Combine>& combines, int indent);
  void combine_by_tree(const std::vector<lir::Stmt::Combine>& combines, int axis, int indent);
  // The thread's rank in its block, x fastest.
  std::string thread_rank() const;
  // `var = var OP other` for an accumulator, in the emitter's exact semantics (wrapping, NaN-propagating).
  std::string combine_statement(const lir::Stmt::Combine& c, const std::string& other);

  std::string kernels_;
  const lir::Launch* launch_ = nullptr;           // of the kernel being printed
  std::map<std::string, lir::ExprP> let_values_;  // the lets printed so far in that kernel
  int cooperative_count_ = 0;
};

}  // namespace ekb::codegen
