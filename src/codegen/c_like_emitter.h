// The base of the C-family emitters, CEmitter (cpu), CudaEmitter and OpenCLEmitter, each of which
// is mostly a table of spellings. It prints a lowered loop-IR function (lower/lower.h) as one
// source file and decides nothing about what runs where: the lowering passes did (which loops are
// threads, which stages are kernels, how a cooperative reduction combines, what to prefetch).
//
// Everything the C family shares lives here: statements, operator precedence (by full
// parenthesization), the IR's exact integer semantics (wrapping through unsigned types, floor
// division, saturating conversions), NaN-propagating min/max, and the prelude of small helper
// functions, emitted only when used. So do the kernel statements the two GPU languages share
// (c_like_kernels.cpp): a Kernel's definition and launch, grid-stride, block, thread and
// cooperative loops, barriers and the forms of a ThreadAllReduce, through the spelling hooks
// below; the cpu emitter never meets them (their hooks' defaults throw).
#pragma once
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "lir/loop_ir.h"

namespace ekb::codegen {

using ir::ScalarType;

class CLikeEmitter {
 public:
  explicit CLikeEmitter(const lir::Func& f) : f_(f) {}
  virtual ~CLikeEmitter() = default;

  // The complete source file: header, prelude of helpers, the kernels (GPU), the entry point.
  std::string emit();

 protected:
  // ---- spellings of every language (C's where there is a default)
  // The element type of a buffer in memory (the ABI's spelling).
  virtual std::string storage_type(ScalarType t) const = 0;
  // The type of a computed value (a variable): index is a 64-bit integer, bool an int.
  virtual std::string value_type(ScalarType t) const;
  // The unsigned integer type of the same width, for wrapping arithmetic (32 or 64 bits).
  virtual std::string unsigned_type(int bits) const;
  // The math library function computing `f` in float type t ("expf" / "exp").
  virtual std::string math_function(lir::Intrinsic f, ScalarType t) const;
  // half <-> f32 conversion functions; `to_half` picks the direction.
  virtual std::string half_conversion(ScalarType half, bool to_half) const = 0;
  // Text printed before a loop (e.g. "#pragma omp parallel for"), or empty.
  virtual std::string loop_annotation(const lir::Stmt& loop) const { return ""; }
  // The declaration(s) that make an Allocate's buffer available, at `indent`: a local array, or
  // a pointer into the scratch workspace.
  virtual std::string allocation(const lir::Stmt& alloc, const std::string& indent) const;
  // Everything before the helpers (comments, includes).
  virtual std::string file_header() const = 0;
  // Declarations placed before the entry point (the kernels, the scratch-size function); may be empty.
  virtual std::string before_entry() const { return ""; }
  // The entry point up to its "{", what closes it ("}\n"), and the text after it.
  virtual std::string entry_begin() const = 0;
  virtual std::string entry_end() const { return "}\n"; }
  virtual std::string after_entry() const { return ""; }
  // "static inline" (C), "__device__ static inline" (CUDA), ...
  virtual std::string helper_qualifier() const = 0;
  // A helper's full definition; the base defines every helper it uses.
  virtual std::string helper_definition(const std::string& name) const;
  // A load of the flat `index` of buffer load.name, and a store of `value` there (one statement).
  virtual std::string load_text(const lir::Expr& load, const std::string& index);
  virtual std::string store_text(const lir::Stmt& store, const std::string& index, const std::string& value);
  virtual std::string float_literal(double v, ScalarType t) const;
  virtual std::string int_literal(int64_t v, ScalarType t) const;
  // A Prefetch statement (insert_prefetches), without indentation or newline.
  virtual std::string prefetch_statement(const lir::Stmt& prefetch);

  // ---- spellings of the kernel languages (the defaults throw: the target has no kernels)
  // Whether the entry point only launches kernels (every top-level statement is a Kernel).
  virtual bool launches_kernels() const { return false; }
  // A kernel's definition up to its opening "{\n", after a comment saying `what` it runs.
  virtual std::string kernel_head(const std::string& name, const std::string& what) const;
  // How the language calls its threads, for comments ("blocks and threads").
  virtual std::string thread_space_name() const;
  // The text launching kernel `name` on one thread, over a grid-stride launch's iterations
  // (their extents each clamped at 0), or with a Grid launch's geometry.
  virtual std::string launch_single_thread(const std::string& name);
  virtual std::string launch_over(const std::string& name, const lir::Launch& launch);
  virtual std::string launch_geometry(const std::string& name, const lir::KernelGeometry& g);
  // The index of the calling thread in the whole launch, and the number of threads launched
  // (64-bit integer expressions in device code).
  virtual std::string global_thread_index() const;
  virtual std::string global_thread_count() const;
  // The block's index, and the thread's index within its block, along axis 0, 1, 2 (x, y, z).
  virtual std::string block_index(int axis) const;
  virtual std::string thread_index(int axis) const;
  // The statement making the threads of a block wait for each other (shared memory visible).
  virtual std::string barrier_statement() const;
  // The declaration of a shared-memory buffer at the top of a kernel.
  virtual std::string shared_declaration(const lir::Stmt& alloc) const;
  // Four consecutive floats of `buffer` from element `index` (a multiple of 4) as one float4
  // lvalue; `shared`: the buffer is in shared memory; `writable`: stored to.
  virtual std::string float4_at(const std::string& buffer, const std::string& index, bool shared, bool writable) const;
  // `value` (a variable of type t) of the thread whose lane index in its warp is this one's xor
  // `lane_mask`, every lane of the warp taking part (AllReduceForm::Shuffles).
  virtual std::string warp_exchange(const std::string& value, ScalarType t, int lane_mask) const;
  // The preprocessor condition under which warp_exchange is available (AllReduceForm::ShufflesOrTree).
  virtual std::string warp_exchange_condition() const;

  // ---- printing, for subclasses that extend it
  std::string expr(const lir::Expr& e);
  // Virtual so that the cpu emitter prints vectorized loops as explicit SIMD code.
  virtual void stmt(const lir::Stmt& s, int indent);
  // A For's annotation and its header up to "{" (the body and "}" are the caller's).
  void open_loop(const lir::Stmt& loop, int indent);
  // Records that the body calls helper `name` (and what it needs); returns the name.
  const std::string& use_helper(const std::string& name);
  // The kernels printed so far, in launch order (complete once the entry point's body is).
  const std::string& kernels() const { return kernels_; }
  // The names of the entry point's arguments in ABI order, ", "-separated (inputs, outputs, params,
  // then the scratch workspace, `scratch_name`, where there is one): what a kernel launch passes.
  std::string argument_names(const std::string& scratch_name) const;

  const lir::Func& f_;
  std::string out_;  // the entry point's body, as it is printed

 private:
  std::string int_arith(const lir::Expr& e, const std::string& a, const std::string& b);
  std::string binary(const lir::Expr& e);
  std::string call(const lir::Expr& e);
  std::string cast(const lir::Expr& e);
  std::string prelude() const;

  // ---- the kernel statements (c_like_kernels.cpp)
  // A Kernel: its definition appended to kernels_, its launch to the entry point's body.
  void kernel(const lir::Stmt& kernel);
  // The loops bound to blocks and threads, grid-stride nests, cooperative copies.
  void gpu_loop(const lir::Stmt& loop, int indent);
  // A nest of GpuGridStride loops flattened into one loop over all the threads of the launch.
  void grid_stride_nest(const lir::Stmt& nest, int indent);
  // A loop bound to threads: its variable the thread's index, guarded where the block is wider.
  void thread_loop(const lir::Stmt& loop, int indent);
  // A ThreadAllReduce in its form: warp shuffles, a tree in shared memory, or both under
  // warp_exchange_condition().
  void all_reduce(const lir::Stmt& reduce, int indent);
  void combine_by_shuffles(const std::vector<lir::Stmt::Combine>& combines, int indent);
  void combine_by_tree(const std::vector<lir::Stmt::Combine>& combines, int axis, int indent);
  // `var = var OP other` for an accumulator, in the exact semantics (wrapping, NaN-propagating).
  std::string combine_statement(const lir::Stmt::Combine& c, const std::string& other);
  // A nest of GpuCooperative loops flattened and spread over the block's threads, four floats per
  // turn where vectorize_cooperative_copies said so.
  void cooperative_nest(const lir::Stmt& nest, int indent);
  // The loop of a cooperative copy that gives its thread the elements `rank`, rank + threads, ...
  // of `count` (text) as PREFIX_flat: when the count is a known constant, a fixed number of turns
  // unrolled, so that each thread issues all its loads before their stores wait for them.
  void open_cooperative_turns(const std::string& prefix, const std::string& rank, const std::string& count,
                              std::optional<int64_t> constant_count, const std::string& pad);
  // The thread's rank in its block, x fastest; as one operand (Intrinsic::ThreadRank).
  std::string thread_rank() const;
  std::string thread_rank_operand() const;

  std::vector<std::string> helpers_;  // in first-use order, dependencies first
  std::set<std::string> helper_set_;
  std::string kernels_;
  const lir::Launch* launch_ = nullptr;  // of the kernel being printed
};

// The C type suffix of a helper name ("i8", "f32", ...); narrow integers compute as i32.
std::string helper_suffix(ScalarType t);

}  // namespace ekb::codegen
