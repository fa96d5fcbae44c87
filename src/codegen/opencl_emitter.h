// The OpenCL emitter for the `opencl` backend: CLikeEmitter's spellings in OpenCL C 1.2. The
// kernels the lowering outlined (lower_options_for(Target::OpenCL): lower/outline_kernels.h) are `__kernel`
// functions and their launches the launch description of docs/ABI.md, exactly the form a `.cl`
// source solution takes:
//
//   __kernel void ekb_kernel_0(__global const float* restrict x, ..., long R, __global uchar* ekb_scratch) {...}
//   /* ekb-launch
//   scratch ekb_scratch 4096
//   kernel ekb_kernel_0 global=[min((R * C + 255) / 256, 65535) * 256] local=[256] args=[x, y, R, C, ekb_scratch]
//   */
//
// Types follow the ABI table: f16 buffers are `half` and read and written with vload_half /
// vstore_half_rte (no cl_khr_fp16 needed: values compute in float), bf16 buffers are `ushort` bits
// converted by two helpers defined in the file; double enables cl_khr_fp64 where used. Math calls
// are OpenCL's overloaded built-ins.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "codegen/c_like_emitter.h"
#include "ir/instance.h"

namespace ekb::codegen {

struct OpenCLEmitOptions {
  std::string scratch_name = "ekb_scratch";
};

class OpenCLEmitter : public CLikeEmitter {
 public:
  OpenCLEmitter(const lir::Func& f, OpenCLEmitOptions options = {}) : CLikeEmitter(f), options_(std::move(options)) {}

 protected:
  std::string storage_type(ScalarType t) const override;
  std::string math_function(lir::Intrinsic f, ScalarType t) const override;
  std::string half_conversion(ScalarType half, bool to_half) const override;
  std::string allocation(const lir::Stmt& alloc, const std::string& indent) const override;
  std::string int_literal(int64_t v, ScalarType t) const override;
  std::string file_header() const override;
  std::string before_entry() const override { return kernels(); }
  std::string entry_begin() const override;
  std::string entry_end() const override { return "*/\n"; }
  std::string helper_qualifier() const override { return "static inline"; }
  std::string load_text(const lir::Expr& load, const std::string& index) override;
  std::string store_text(const lir::Stmt& store, const std::string& index, const std::string& value) override;
  // nvcc-like compilers (NVIDIA's, with cl_nv_pragma_unroll; clang, PoCL's) take it: a register
  // tile's loops must be unrolled for the tile to stay in registers.
  std::string loop_annotation(const lir::Stmt& loop) const override {
    return loop.for_kind == lir::ForKind::Unrolled ? "#pragma unroll" : "";
  }

  bool launches_kernels() const override { return true; }
  std::string kernel_head(const std::string& name, const std::string& what) const override;
  // 32-bit like CUDA's indices (the launch's global size stays below 2^32: at most GpuLowerOptions::max_blocks
  // work-groups): a size_t index keeps all the index arithmetic in 64 bits on NVIDIA's compiler.
  std::string global_thread_index() const override { return "(int64_t)(uint)get_global_id(0)"; }
  std::string global_thread_count() const override { return "(int64_t)(uint)get_global_size(0)"; }
  std::string thread_space_name() const override { return "work-groups and work-items"; }
  std::string launch_over(const std::string& name, const lir::Launch& launch) override;
  std::string launch_single_thread(const std::string& name) override;
  // 32-bit like CUDA's blockIdx and threadIdx: a size_t index keeps the index arithmetic of the
  // kernels that use them in 64 bits on NVIDIA's OpenCL compiler (the launch geometry's extents are
  // constants within the device limits, so no index reaches 2^32).
  std::string block_index(int axis) const override { return "(uint)get_group_id(" + std::to_string(axis) + ")"; }
  std::string thread_index(int axis) const override { return "(uint)get_local_id(" + std::to_string(axis) + ")"; }
  std::string barrier_statement() const override { return "barrier(CLK_LOCAL_MEM_FENCE);"; }
  // OpenCL C 1.2 has no shuffles; NVIDIA's compiler takes inline PTX (file_header defines the
  // helper where it is that compiler), so 32-bit values (the warp_shuffle_types of lower_options_for(Target::OpenCL))
  // are exchanged with shfl.sync there.
  std::string warp_exchange(const std::string& value, ScalarType t, int lane_mask) const override;
  std::string warp_exchange_condition() const override { return "defined(EKB_NV_WARP_SHUFFLE)"; }
  std::string shared_declaration(const lir::Stmt& alloc) const override;
  std::string launch_geometry(const std::string& name, const lir::KernelGeometry& g) override;
  std::string float4_at(const std::string& buffer, const std::string& index, bool shared,
                        bool writable) const override {
    return std::string("(*(") + (shared ? "__local " : "__global ") + (writable ? "" : "const ") + "float4*)&" + buffer +
           "[" + index + "])";
  }

 private:
  // `e` in the launch description's expression language (integers, parameters, + - * / %, min,
  // max), or nothing when it has no spelling there.
  std::optional<std::string> launch_expr(const lir::Expr& e) const;
  bool is_half_buffer(const std::string& name) const;

  OpenCLEmitOptions options_;
};

// The loop IR lowered for opencl (lower_options_for(Target::OpenCL)) printed as OpenCL C plus its
// launch description.
std::string emit_opencl_source(const lir::Func& f, const OpenCLEmitOptions& options = {});

}  // namespace ekb::codegen
