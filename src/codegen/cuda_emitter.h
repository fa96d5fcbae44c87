// The CUDA emitter for the `cuda` backend: CLikeEmitter's spellings in CUDA C++. The kernels the
// lowering outlined (lower_options_for(Target::Cuda): lower/outline_kernels.h) are `__global__` functions
// launched with `<<<grid, block, 0, stream>>>` in program order on `stream`; CUDA's storage types,
// half conversions, thread indices, __syncthreads and __shfl_xor_sync. Its output obeys the kernel ABI as a `.cu` source solution
// does (docs/ABI.md): `extern "C" void ekb_main(<device pointers>, <params>, cudaStream_t stream[,
// void* scratch])`.
//
// The device code also compiles under NVRTC (the host part is guarded by __CUDACC_RTC__).
#pragma once
#include <string>
#include <vector>

#include "codegen/c_like_emitter.h"
#include "ir/instance.h"

namespace ekb::codegen {

struct CudaEmitOptions {
  std::string entry_name = "ekb_main";
  std::string scratch_function = "ekb_scratch_bytes";
};

class CudaEmitter : public CLikeEmitter {
 public:
  CudaEmitter(const lir::Func& f, CudaEmitOptions options = {}) : CLikeEmitter(f), options_(std::move(options)) {}

 protected:
  std::string storage_type(ScalarType t) const override;
  std::string half_conversion(ScalarType half, bool to_half) const override;
  std::string file_header() const override;
  std::string before_entry() const override;
  std::string entry_begin() const override;
  std::string after_entry() const override;
  std::string helper_qualifier() const override { return "static __host__ __device__ inline"; }
  // nvcc and NVRTC unroll it: a register tile's loops must be unrolled for it to stay in registers.
  std::string loop_annotation(const lir::Stmt& loop) const override {
    return loop.for_kind == lir::ForKind::Unrolled ? "#pragma unroll" : "";
  }

  bool launches_kernels() const override { return true; }

  std::string kernel_head(const std::string& name, const std::string& what) const override;
  std::string global_thread_index() const override { return "(int64_t)blockIdx.x * blockDim.x + threadIdx.x"; }
  std::string global_thread_count() const override { return "(int64_t)gridDim.x * blockDim.x"; }
  std::string thread_space_name() const override { return "blocks and threads"; }
  std::string launch_over(const std::string& name, const lir::Launch& launch) override;
  std::string launch_single_thread(const std::string& name) override;
  std::string launch_geometry(const std::string& name, const lir::KernelGeometry& g) override;
  std::string block_index(int axis) const override { return std::string("blockIdx.") + "xyz"[axis]; }
  std::string thread_index(int axis) const override { return std::string("threadIdx.") + "xyz"[axis]; }
  std::string barrier_statement() const override { return "__syncthreads();"; }
  std::string shared_declaration(const lir::Stmt& alloc) const override;
  std::string float4_at(const std::string& buffer, const std::string& index, bool shared,
                        bool writable) const override {
    return std::string("(*(") + (writable ? "" : "const ") + "float4*)&" + buffer + "[" + index + "])";
  }
  // For the warp_shuffle_types of lower_options_for(Target::Cuda) (its overloads).
  std::string warp_exchange(const std::string& value, ScalarType t, int lane_mask) const override {
    return "__shfl_xor_sync(0xffffffffu, " + value + ", " + std::to_string(lane_mask) + ")";
  }
  std::string warp_exchange_condition() const override { return ""; }

 private:
  // The host entry point's declaration, without ';'.
  std::string signature() const;
  // Kernel parameters (`for_kernel`) or host parameters (with the stream).
  std::vector<std::string> parameters(bool for_kernel) const;

  CudaEmitOptions options_;
};

// The loop IR lowered for cuda (lower_options_for(Target::Cuda)) printed as CUDA C++.
std::string emit_cuda_source(const lir::Func& f, const CudaEmitOptions& options = {});

}  // namespace ekb::codegen
