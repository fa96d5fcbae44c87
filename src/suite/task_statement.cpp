#include "suite/task_statement.h"

#include <fmt/core.h>

#include "codegen/signature.h"
#include "codegen/target.h"
#include "ir/printer.h"
#include "suite/tolerance.h"

namespace ekb::suite {

namespace {

using ir::Target;

std::string shape_text(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

std::string tensor_table(const ir::Instance& inst, Target target) {
  std::string out = "| tensor | role | element type | shape (row-major, contiguous) | input values |\n"
                    "|---|---|---|---|---|\n";
  for (const auto& t : inst.tensors) {
    if (t.decl->role == ir::TensorRole::Temp) continue;
    std::string domain = "";
    if (t.decl->role == ir::TensorRole::Input) {
      switch (t.decl->domain.kind) {
        case ir::DomainKind::Range:
          domain = "uniform in [" + ir::print_expr(*t.decl->domain.lo) + ", " +
                   ir::print_expr(*t.decl->domain.hi) + "]";
          break;
        case ir::DomainKind::Spd: domain = "symmetric positive definite"; break;
        case ir::DomainKind::Default: domain = "random over the type's default range"; break;
      }
    }
    out += fmt::format("| `{}` | {} | `{}` ({}) | {} | {} |\n", t.decl->name, ir::role_name(t.decl->role),
                       codegen::element_type_name(t.type, target), ir::scalar_type_name(t.type),
                       shape_text(t.shape), domain);
  }
  return out;
}

std::string tolerance_text(const ir::Instance& inst) {
  std::string out;
  for (const auto& t : inst.tensors) {
    if (t.decl->role != ir::TensorRole::Output) continue;
    Tolerance tol = tolerance_for(t.type);
    if (tol.exact())
      out += fmt::format("- `{}` ({}): must equal the reference exactly.\n", t.decl->name,
                         ir::scalar_type_name(t.type));
    else
      out += fmt::format("- `{}` ({}): |out - ref| <= {:g} * |ref| + {:g} * rms(ref) for every element.\n",
                         t.decl->name, ir::scalar_type_name(t.type), tol.rtol, tol.atol_rms);
  }
  return out;
}

std::string backend_rules(const ir::Instance& inst, Target target) {
  switch (target) {
    case Target::Cpu:
      return "- One C or C++ translation unit defining `ekb_main` with C linkage (in C++, declare it\n"
             "  `extern \"C\"`). It is compiled by clang with `-O3 -march=native -fopenmp -fno-math-errno\n"
             "  -fveclib=libmvec` into a shared object; `ekb_abi.h` is included before your code, so\n"
             "  `ekb_f16`, `ekb_bf16` and their conversion helpers are available. OpenMP, SIMD intrinsics and the C/C++ standard\n"
             "  libraries may be used; no other libraries.\n"
             "- Do not define `main`, print, read files, or use the network.\n";
    case Target::Cuda:
      return "- One `.cu` file defining the host function `ekb_main` with C linkage. All pointers are\n"
             "  device memory. Enqueue all work on `stream` (no other stream, no device-wide\n"
             "  synchronization, no cudaMalloc/cudaFree); the harness synchronizes and times the stream\n"
             "  with CUDA events. Compiled by nvcc for the GPU's architecture; `__half` and\n"
             "  `__nv_bfloat16` come from cuda_fp16.h and cuda_bf16.h, which are included.\n";
    case Target::OpenCL: {
      // The launch description with this workload's own argument names.
      std::string args;
      for (ir::TensorRole role : {ir::TensorRole::Input, ir::TensorRole::Output})
        for (const auto& t : inst.tensors)
          if (t.decl->role == role) args += (args.empty() ? "" : ", ") + t.decl->name;
      std::string first_param = inst.pattern().params.empty() ? "" : inst.pattern().params.front().name;
      for (const auto& prm : inst.pattern().params) args += ", " + prm.name;
      const std::string size = first_param.empty() ? "256" : "(" + first_param + " + 255) / 256 * 256";
      return "- One `.cl` file: OpenCL C 1.2 kernels (built with `-cl-std=CL1.2`), followed by a launch\n"
             "  description in a comment, one line per kernel launch, run in order on one in-order queue:\n"
             "      /* ekb-launch\n"
             "      kernel NAME global=[" + size + "] local=[256] args=[" + args + "]\n"
             "      */\n"
             "  `global` and `local` list 1 to 3 sizes: integer expressions of the parameters (numbers,\n"
             "  parameter names, + - * / % with C's truncating division, min(a, b), max(a, b), parentheses);\n"
             "  `local` may be omitted; each global size must be a multiple of its local size. `args`\n"
             "  names the kernel's parameters in order: tensors (`__global` pointers), parameters (passed\n"
             "  as `long`), scratch buffers. A launch whose global size is 0 is skipped.\n"
             "- `half` tensors are read with `vload_half(i, p)` and written with `vstore_half_rte(v, i, p)`\n"
             "  (the device may lack cl_khr_fp16); bf16 tensors are `ushort` bit patterns (the high half\n"
             "  of a float); `double` needs `#pragma OPENCL EXTENSION cl_khr_fp64 : enable`.\n";
    }
  }
  return "";
}

}  // namespace

std::string task_statement(const WorkloadEntry& w, const ir::Instance& inst, Target target) {
  const ir::Pattern& p = inst.pattern();
  std::string bindings;
  for (const auto& b : w.workload->bindings)
    bindings += (bindings.empty() ? "" : ", ") + b.name + " = " +
                (b.is_type ? b.type_name : std::to_string(b.int_value));
  std::string params;
  for (const auto& prm : p.params)
    params += (params.empty() ? "" : ", ") + fmt::format("`{}` = {}", prm.name, inst.params.at(prm.name));

  std::string out;
  out += fmt::format("# Task: a fast {} kernel for `{}` on the `{}` backend\n\n",
                     codegen::source_language(target), w.full_name(), ir::target_name(target));
  out += "## What to compute\n\n";
  if (!p.summary.empty()) out += p.summary + "\n";
  out += fmt::format("Origin: {}.\n\n", p.source);
  out += "The EdgeKernelBench IR program below defines the result exactly. Each statement defines a\n"
         "tensor element by element: `y[r, c] = ...` holds for every index in the tensor's shape;\n"
         "`for` statements run in order, as written (recurrences). `sum/max/min/prod(k in a..b: e)`\n"
         "reduce over the half-open range [a, b); `pad(x, v)[...]` reads v out of bounds, `edge(x)`\n"
         "clamps indices, `mirror(x)` reflects them. Integer `/` and `%` round toward negative\n"
         "infinity; integer arithmetic wraps at its type's width; `sat(T, e)` saturates; `requant`,\n"
         "`rdmulh` and `rshift` are TFLite's fixed-point requantization. `temp` tensors are\n"
         "intermediates: you may compute them any way you like, or not at all.\n\n";
  out += "```ekb\n" + ir::print_pattern(p) + "```\n\n";
  out += fmt::format("This workload binds {}.\n\n", bindings);
  out += "## Tensors\n\n" + tensor_table(inst, target) + "\n";
  out += "## Interface\n\n";
  out += fmt::format("```{}\n{}\n```\n\n", codegen::code_fence_language(target),
                     codegen::kernel_signature(inst, target));
  out += fmt::format("Inputs, then outputs, in the order above, then the parameters {} as 64-bit integers.\n",
                     params.empty() ? std::string("(none)") : params);
  out += backend_rules(inst, target);
  out += "- Inputs are read-only. Write every element of every output on every call; outputs hold\n"
         "  garbage (NaN) before each call. Keep no state between calls.\n";
  if (target == Target::OpenCL)
    out += "- Scratch memory is declared: a line `scratch NAME BYTES` in the launch\n"
           "  description (BYTES an expression of the parameters), before the kernel lines whose `args`\n"
           "  pass NAME (a `__global` pointer to that many bytes, at least 64-byte aligned).\n";
  else
    out += "- Scratch memory can be declared: define `int64_t ekb_scratch_bytes(<the same int64_t\n"
           "  parameters>)` and add a final `void* scratch` parameter to `ekb_main`; the harness passes\n"
           "  that many bytes, 64-byte aligned, allocated outside the timed call. Allocating it yourself\n"
           "  is allowed within the memory limit; it is timed with the call and must be freed before\n"
           "  returning.\n";
  out += "- A solution for this workload may assume these parameter values; a solution for the whole\n"
         "  pattern is also run on held-out shapes and must handle any valid values.\n\n";
  out += "## How it is judged\n\n"
         "Correctness: several trials with fresh random inputs drawn as in the table, plus edge cases,\n"
         "compared with a reference computed in double precision:\n";
  out += tolerance_text(inst);
  out += "Inputs must be unchanged afterwards, and correctness is checked again after timing with\n"
         "inputs never seen before. Code runs in a sandboxed process with time and memory limits.\n\n"
         "Speed: the median of repeated timed runs (caches flushed between runs), compared with the\n"
         "baseline compiled from the same IR and measured in the same session. The score is the\n"
         "speedup over the baseline; only correct kernels count.\n\n";
  out += fmt::format("## Answer\n\nReply with one ```{} code block holding the complete source file.\n",
                     codegen::code_fence_language(target));
  return out;
}

}  // namespace ekb::suite
