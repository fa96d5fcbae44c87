// The C emitter for the `cpu` backend: CLikeEmitter's C spellings plus what only the cpu has,
// OpenMP and clang's loop pragmas, explicit SIMD code for vectorized loops, streaming stores
// (nontemporal) and software prefetches. Its output obeys the kernel ABI exactly as a source
// solution does (docs/ABI.md): one C translation unit defining
// `void ekb_main(...)` with the signature codegen::kernel_signature(inst, Target::Cpu) gives, plus
// `ekb_scratch_bytes` and a final `void* scratch` argument when temps need the scratch workspace.
// It is compiled like any solution: clang -O3 -march=native -fopenmp -include ekb_abi.h.
#pragma once
#include <set>
#include <string>

#include "codegen/c_like_emitter.h"
#include "codegen/simd_loop.h"
#include "ir/instance.h"

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
  // The helper `op` ("load", "store", "stream", "splat") for the loop's vector type, declared with it.
  std::string simd_helper(const std::string& op, const SimdLoop& lanes);
  // The address of the first lane's element of a consecutive access (the lane variable is
  // declared at its first value around the SIMD code).
  std::string first_lane_address(const std::string& buffer, const lir::ExprP& index);

  CEmitOptions options_;
  // Set while the body is emitted (before entry_begin): the kernel has a vectorized loop.
  mutable bool uses_simd_loops_ = false;
  // ... and the buffers it stores with streaming stores (nontemporal), which need a fence before
  // the kernel returns.
  std::set<std::string> streamed_;
};

// The loop IR lowered for cpu printed as C.
std::string emit_c_source(const lir::Func& f, const CEmitOptions& options = {});

}  // namespace ekb::codegen
