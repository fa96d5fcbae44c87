// The CUDA emitter for the `cuda` backend: a thin subclass of the C emitter (the same expressions,
// statements, helpers and type spellings of values; CUDA's storage types, half conversions and
// entry point). Its output obeys the kernel ABI as a `.cu` source solution does (docs/ABI.md):
// `extern "C" void ekb_main(<device pointers>, <params>, cudaStream_t stream[, void* scratch])`.
//
// The default GPU schedule: each top-level statement of the loop IR (a stage) becomes one kernel,
// launched in program order on `stream`. The outermost loops of a stage that are pure (independent
// iterations, lir::LoopRole::Pure) are flattened into one iteration space spread over blocks and
// threads with a grid-stride loop; everything inside them (reductions, ordered updates, inner
// loops) runs sequentially in each thread. A stage with no such loop runs on a single thread
// (consecutive ones share a kernel). Temps live in the scratch workspace (device memory), since a
// stage's result must outlive its kernel.
//
// The device code also compiles under NVRTC (the host part is guarded by __CUDACC_RTC__).
#pragma once
#include <string>
#include <vector>

#include "codegen/c_emitter.h"

namespace ekb::codegen {

struct CudaEmitOptions {
  std::string entry_name = "ekb_main";
  std::string scratch_function = "ekb_scratch_bytes";
  int threads_per_block = 256;
};

class CudaEmitter : public CEmitter {
 public:
  CudaEmitter(const lir::Func& f, CudaEmitOptions options = {})
      : CEmitter(f, {options.entry_name, options.scratch_function}), options_(std::move(options)) {}

  // The host entry point's declaration, without ';'.
  std::string signature() const;

 protected:
  std::string storage_type(ScalarType t) const override;
  std::string half_conversion(ScalarType half, bool to_half) const override;
  std::string loop_annotation(const lir::Stmt& loop) const override;
  std::string file_header() const override;
  std::string before_entry() const override;
  std::string entry_begin() const override;
  std::string after_entry() const override;
  std::string helper_qualifier() const override { return "static __host__ __device__ inline"; }
  std::string entry_body() override;

 private:
  // The leading loops of `stage` that may run in parallel, outermost first (possibly none).
  std::vector<const lir::Stmt*> parallel_loops(const lir::Stmt& stage) const;
  bool is_pure_loop(const std::string& var) const;
  // Kernel parameters (`for_kernel`) or host parameters (with the stream), and the call arguments.
  std::vector<std::string> parameters(bool for_kernel) const;
  std::string kernel_arguments() const;
  // Prints `s` at `indent` into a string (out_ is left as it was).
  std::string print(const lir::Stmt& s, int indent);
  // The declarations of `context` (temps, lets around the whole body) that `code` needs.
  std::string context_lines(const std::vector<const lir::Stmt*>& context, const std::string& code);
  // One kernel (appended to kernels_); returns the host code launching it.
  std::string parallel_kernel(const std::vector<const lir::Stmt*>& context,
                              const std::vector<const lir::Stmt*>& loops);
  std::string serial_kernel(const std::vector<const lir::Stmt*>& context,
                            const std::vector<const lir::Stmt*>& stages);
  std::string kernel_head(const std::string& name, const std::string& what) const;

  CudaEmitOptions options_;
  std::string kernels_;  // the __global__ functions, printed by before_entry()
  int kernel_count_ = 0;
};

// Lowering options for cuda: its schedule target, and every temp in the scratch workspace.
lir::LowerOptions cuda_lower_options();

// Lowers `inst` for cuda (the default GPU schedule) and prints it as CUDA C++.
std::string emit_cuda_source(const ir::Instance& inst, const CudaEmitOptions& options = {});
std::string emit_cuda_source(const lir::Func& f, const CudaEmitOptions& options = {});

}  // namespace ekb::codegen
