// The C emitter for the `cpu` backend: CLikeEmitter's C spellings plus what only the cpu has,
// OpenMP and clang's loop pragmas, explicit SIMD code for vectorized loops, streaming stores
// (nontemporal) and software prefetches. Its output obeys the kernel ABI exactly as a source
// solution does (docs/ABI.md): one C translation unit defining
// `void ekb_main(...)` with the signature codegen::kernel_signature(inst, Target::Cpu) gives, plus
// `ekb_scratch_bytes` and a final `void* scratch` argument when temps need the scratch workspace.
// It is compiled like any solution: clang -O3 -march=native -fopenmp -include ekb_abi.h.
#pragma once
#include <map>
#include <set>
#include <string>
#include <vector>

#include "codegen/c_like_emitter.h"
#include "codegen/simd_loop.h"
#include "ir/instance.h"
#include "lir/int_interval.h"

namespace ekb::codegen {

struct CEmitOptions {
  // Renaming the entry points lets several kernels share one shared object (tests).
  std::string entry_name = "ekb_main";
  std::string scratch_function = "ekb_scratch_bytes";
};

class CEmitter : public CLikeEmitter {
 public:
  CEmitter(const lir::Func& f, CEmitOptions options = {}) : CLikeEmitter(f), options_(std::move(options)) {}

 protected:
  std::string storage_type(ScalarType t) const override;
  std::string half_conversion(ScalarType half, bool to_half) const override;
  // OpenMP for parallel loops, clang's vectorize and unroll pragmas.
  std::string loop_annotation(const lir::Stmt& loop) const override;
  std::string file_header() const override;
  std::string before_entry() const override;
  std::string entry_begin() const override;
  std::string entry_end() const override;
  std::string prefetch_statement(const lir::Stmt& prefetch) override;
  std::string helper_qualifier() const override { return "static inline"; }
  std::string helper_definition(const std::string& name) const override;
  // Vectorized loops that qualify (codegen/simd_loop.h) as explicit SIMD code, others as loops.
  void stmt(const lir::Stmt& s, int indent) override;

 private:
  struct Argument {
    std::string declaration, name;  // "const float* x", "x"
  };
  // The entry point's arguments in ABI order: inputs, outputs, params, the scratch pointer.
  std::vector<Argument> arguments() const;
  // The entry point's declaration, without the trailing ';' (the ABI signature, plus
  // `void* scratch` when the function declares scratch memory).
  std::string signature() const;
  void simd_stmt(const lir::Stmt& s, const SimdLoop& lanes, int indent);
  // A lane-dependent value as a vector; a uniform one broadcast.
  std::string simd_value(const lir::Expr& e, const SimdLoop& lanes);
  // The helper `op` ("load", "store", "stream", "splat", "select") for the loop's vector type, declared with it.
  std::string simd_helper(const std::string& op, const SimdLoop& lanes);
  // ... "load_masked" or "store_masked", with the ISA's headers.
  std::string masked_helper(const std::string& op, const SimdLoop& lanes);
  // The address of the first lane's element of a consecutive access (the lane variable is
  // declared at its first value around the SIMD code).
  std::string first_lane_address(const std::string& buffer, const lir::ExprP& index);
  // A masked tail's guard: the body once unmasked (every lane runs) and once masked.
  void simd_masked_tail(const lir::Stmt& guard, const LaneLimit& limit, const SimdLoop& lanes, int indent);
  // Whether every lane's element of a consecutive access lies in a buffer private to the thread
  // (a stack or local array), so that a masked access may touch the whole vector: a plain load,
  // and a store of the old values blended in, which keep a register tile in registers.
  bool whole_vector_in_private_buffer(const std::string& buffer, const lir::ExprP& index) const;
  // The known range of an index variable while its loop or let is printed (for the check above).
  void bind_range(const std::string& name, const lir::ExprP& lo, const lir::ExprP& hi);
  void bind_let(const std::string& name, const lir::ExprP& value);  // its range and its value
  void unbind_let(const std::string& name);
  // The condition under which every masked tail of the SIMD loops under `loop` runs all its lanes
  // in an iteration of it, whatever the loops inside it do; "" when there is none, or when a tail's
  // lanes depend on a value inside the loop that is not a loop of known range or a let.
  std::string all_lanes_live_condition(const lir::Stmt& loop);
  // The x86, SVE and RVV spellings of one masked helper (helper_definition's).
  std::string masked_helper_definition(const std::string& name, ScalarType element, int64_t lanes) const;

  CEmitOptions options_;
  // Set while the body is emitted (before entry_begin): the kernel has a vectorized loop.
  mutable bool uses_simd_loops_ = false;
  // ... and the buffers it stores with streaming stores (nontemporal), which need a fence before
  // the kernel returns.
  std::set<std::string> streamed_;
  // While a masked tail's body is printed: the variable holding how many lanes run (empty: all),
  // the body's variables declared outside the masked part (an assignment to one blends), and the
  // variables of the SIMD body in scope.
  std::string live_lanes_;
  size_t masked_from_ = 0;
  std::vector<std::string> simd_vars_;
  int masks_ = 0;  // masked tails printed, for their variables' names
  // Set inside a loop printed twice for its masked tails (all lanes live, then any): the masked
  // tails below print their unmasked code alone, and no loop below is printed twice again.
  bool all_lanes_live_ = false, in_versioned_loop_ = false;
  std::map<std::string, lir::IntInterval> ranges_;  // the loop and let variables in scope
  std::vector<std::pair<std::string, lir::ExprP>> let_values_;  // the integer lets in scope, in order
  std::map<std::string, int64_t> private_extents_;   // stack and local arrays in scope: elements
};

// The loop IR lowered for cpu printed as C.
std::string emit_c_source(const lir::Func& f, const CEmitOptions& options = {});

}  // namespace ekb::codegen
