// The CUDA emitter for the `cuda` backend: a thin subclass of the GPU emitter (codegen/gpu_emitter.h:
// the default GPU schedule, kernels and what they run), which spells kernels as `__global__`
// functions launched with `<<<grid, block, 0, stream>>>` in program order on `stream`, with CUDA's
// storage types and half conversions. Its output obeys the kernel ABI as a `.cu` source solution
// does (docs/ABI.md): `extern "C" void ekb_main(<device pointers>, <params>, cudaStream_t stream[,
// void* scratch])`.
//
// The device code also compiles under NVRTC (the host part is guarded by __CUDACC_RTC__).
#pragma once
#include <string>
#include <vector>

#include "codegen/gpu_emitter.h"

namespace ekb::codegen {

struct CudaEmitOptions {
  std::string entry_name = "ekb_main";
  std::string scratch_function = "ekb_scratch_bytes";
};

class CudaEmitter : public GpuEmitter {
 public:
  CudaEmitter(const lir::Func& f, CudaEmitOptions options = {})
      : GpuEmitter(f, {options.entry_name, options.scratch_function}),
        options_(std::move(options)) {}

  // The host entry point's declaration, without ';'.
  std::string signature() const;

 protected:
  std::string storage_type(ScalarType t) const override;
  std::string half_conversion(ScalarType half, bool to_half) const override;
  std::string file_header() const override;
  std::string before_entry() const override;
  std::string entry_begin() const override;
  std::string after_entry() const override;
  std::string helper_qualifier() const override { return "static __host__ __device__ inline"; }

  std::string kernel_head(const std::string& name, const std::string& what) const override;
  std::string global_thread_index() const override { return "(int64_t)blockIdx.x * blockDim.x + threadIdx.x"; }
  std::string global_thread_count() const override { return "(int64_t)gridDim.x * blockDim.x"; }
  std::string thread_space_name() const override { return "blocks and threads"; }
  std::string launch_over(const std::string& name, const lir::Launch& launch) override;
  std::string launch_single_thread(const std::string& name) override;
  std::string block_index(int axis) const override { return std::string("blockIdx.") + "xyz"[axis]; }
  std::string thread_index(int axis) const override { return std::string("threadIdx.") + "xyz"[axis]; }
  std::string barrier_statement() const override { return "__syncthreads();"; }
  std::string shared_declaration(const lir::Stmt& alloc) const override;
  std::string launch_geometry(const std::string& name, const lir::KernelGeometry& g) override;
  std::string float4_at(const std::string& buffer, const std::string& index, bool shared,
                        bool writable) const override {
    return std::string("(*(") + (writable ? "" : "const ") + "float4*)&" + buffer + "[" + index + "])";
  }
  // __shfl_xor_sync has overloads for 32- and 64-bit integers and floats.
  std::string warp_exchange(const std::string& value, ScalarType t, int lane_mask) const override {
    if (t != ScalarType::F32 && t != ScalarType::F64 && t != ScalarType::I32 && t != ScalarType::I64 &&
        t != ScalarType::Index)
      return "";
    return "__shfl_xor_sync(0xffffffffu, " + value + ", " + std::to_string(lane_mask) + ")";
  }

 private:
  // Kernel parameters (`for_kernel`) or host parameters (with the stream), and the call arguments.
  std::vector<std::string> parameters(bool for_kernel) const;
  std::string kernel_arguments() const;

  CudaEmitOptions options_;
};

// Lowering options for cuda: its schedule target, and every temp in the scratch workspace.
lir::LowerOptions cuda_lower_options();

// Lowers `inst` for cuda (the default GPU schedule) and prints it as CUDA C++.
std::string emit_cuda_source(const ir::Instance& inst, const CudaEmitOptions& options = {});
std::string emit_cuda_source(const lir::Func& f, const CudaEmitOptions& options = {});

}  // namespace ekb::codegen
