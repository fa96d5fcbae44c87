// The C emitter for the `cpu` backend: a thin CLikeEmitter subclass. Its output obeys the kernel
// ABI exactly as a source solution does (docs/ABI.md): one C translation unit defining
// `void ekb_main(...)` with the signature codegen::kernel_signature(inst, Target::Cpu) gives, plus
// `ekb_scratch_bytes` and a final `void* scratch` argument when temps need the scratch workspace.
// It is compiled like any solution: clang -O3 -march=native -fopenmp -include ekb_abi.h.
#pragma once
#include <string>

#include "codegen/c_like_emitter.h"
#include "ir/instance.h"
#include "lower/lower.h"

namespace ekb::codegen {

struct CEmitOptions {
  // Renaming the entry points lets several kernels share one shared object (tests).
  std::string entry_name = "ekb_main";
  std::string scratch_function = "ekb_scratch_bytes";
};

class CEmitter : public CLikeEmitter {
 public:
  CEmitter(const lir::Func& f, CEmitOptions options = {}) : CLikeEmitter(f), options_(std::move(options)) {}

  // The entry point's declaration, without the trailing ';' (the ABI signature, plus
  // `void* scratch` when the function declares scratch memory).
  std::string signature() const;

 protected:
  std::string storage_type(ScalarType t) const override;
  std::string value_type(ScalarType t) const override;
  std::string unsigned_type(int bits) const override;
  std::string math_function(lir::Intrinsic f, ScalarType t) const override;
  std::string half_conversion(ScalarType half, bool to_half) const override;
  std::string loop_annotation(const lir::Stmt& loop) const override;
  std::string allocation(const lir::Stmt& alloc, const std::string& indent) const override;
  std::string file_header() const override;
  std::string before_entry() const override;
  std::string entry_begin() const override;
  std::string helper_qualifier() const override { return "static inline"; }

 private:
  CEmitOptions options_;
  // Set while the body is emitted (before entry_begin): the kernel has a vectorized loop.
  mutable bool uses_simd_loops_ = false;
};

// Lowers `inst` with the default lowering and prints it as C.
std::string emit_c_source(const ir::Instance& inst, const CEmitOptions& options = {},
                          const lir::LowerOptions& lower_options = {});
std::string emit_c_source(const lir::Func& f, const CEmitOptions& options = {});

}  // namespace ekb::codegen
