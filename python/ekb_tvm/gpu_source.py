"""The source a gpu backend runs for TVM's kernels (docs/TVM.md, "The gpu route").

TVM builds each Kernel (translate.kernels_of) as a PrimFunc whose device function it prints as
CUDA or OpenCL C. Around that source:
  - cuda: the helpers the translation calls, as device functions, and the host function
    `ekb_main(..., cudaStream_t stream[, void* scratch])` that launches the kernels in order on
    `stream` with the extents they were written for, each with the arguments its device function
    takes (TVM orders and names them: read from its source), the scratch temps at their offsets in
    the workspace that `ekb_scratch_bytes` declares;
  - opencl: the helpers, and the ekb-launch description (docs/ABI.md): a scratch buffer per temp,
    one line per kernel with its global and local sizes and its arguments by name.
"""

import re

from . import shim

ELEMENT_BYTES = {"bool": 1, "i8": 1, "u8": 1, "i16": 2, "f16": 2, "bf16": 2, "i32": 4, "f32": 4, "i64": 8,
                 "index": 8, "f64": 8}

# The helpers whose cpu definitions (shim.py) call the host's ekb_abi.h or use C's _Bool.
GPU_HELPERS = {
    "ekb_tvm_f16_to_f32": {
        "cuda": "float ekb_tvm_f16_to_f32(uint32_t h) { return __half2float(__ushort_as_half((unsigned short)h)); }\n",
        "opencl": "float ekb_tvm_f16_to_f32(uint h) { ushort bits = (ushort)h; return vload_half(0, (const __private half*)&bits); }\n",
    },
    "ekb_tvm_f32_to_f16": {
        "cuda": "uint16_t ekb_tvm_f32_to_f16(float f) { return __half_as_ushort(__float2half_rn(f)); }\n",
        "opencl": "ushort ekb_tvm_f32_to_f16(float f) { ushort bits; vstore_half_rte(f, 0, (__private half*)&bits); return bits; }\n",
    },
    "ekb_tvm_bf16_to_f32": {
        "cuda": "float ekb_tvm_bf16_to_f32(uint32_t h) { return __uint_as_float(h << 16); }\n",
        "opencl": "float ekb_tvm_bf16_to_f32(uint h) { return as_float(h << 16); }\n",
    },
    "ekb_tvm_f32_to_bf16": {  # round to nearest even, NaN stays NaN (ekb_abi.h's ekb_f32_to_bf16)
        "cuda": ("uint16_t ekb_tvm_f32_to_bf16(float f) {\n  uint32_t u = __float_as_uint(f);\n"
                 "  if ((u & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((u >> 16) | 0x40u);\n"
                 "  return (uint16_t)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);\n}\n"),
        "opencl": ("ushort ekb_tvm_f32_to_bf16(float f) {\n  uint u = as_uint(f);\n"
                   "  if ((u & 0x7fffffffu) > 0x7f800000u) return (ushort)((u >> 16) | 0x40u);\n"
                   "  return (ushort)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);\n}\n"),
    },
    "ekb_tvm_nonzero_f32": "bool ekb_tvm_nonzero_f32(float x) { return x != 0 && x == x; }\n",
    "ekb_tvm_nonzero_f64": "bool ekb_tvm_nonzero_f64(double x) { return x != 0 && x == x; }\n",
    # NaN in either operand gives NaN, as the reference's min/max (the native emitter's ekb_fmin_*).
    "ekb_tvm_fmin_f32": "float ekb_tvm_fmin_f32(float a, float b) { return (b < a || b != b) ? b : a; }\n",
    "ekb_tvm_fmax_f32": "float ekb_tvm_fmax_f32(float a, float b) { return (b > a || b != b) ? b : a; }\n",
    "ekb_tvm_fmin_f64": "double ekb_tvm_fmin_f64(double a, double b) { return (b < a || b != b) ? b : a; }\n",
    "ekb_tvm_fmax_f64": "double ekb_tvm_fmax_f64(double a, double b) { return (b > a || b != b) ? b : a; }\n",
}

PRELUDE = {
    "cuda": "#include <stdint.h>\n#define EKB_TVM_HELPER static __device__ __forceinline__\n",
    "opencl": ("#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n"
               "typedef char int8_t;\ntypedef uchar uint8_t;\ntypedef short int16_t;\ntypedef ushort uint16_t;\n"
               "typedef int int32_t;\ntypedef uint uint32_t;\ntypedef long int64_t;\ntypedef ulong uint64_t;\n"
               "#define EKB_TVM_HELPER static inline\n"),
}


def helper(name, language):
    text = GPU_HELPERS.get(name)
    if isinstance(text, dict):
        text = text[language]
    if text is None:
        text = shim.helper(name)
    if language == "opencl":
        text = re.sub(r"(\d)LL\b", r"\1L", text)  # OpenCL C has no long long: long is 64-bit
    return "EKB_TVM_HELPER " + text


def helpers(externs, language):
    names = []
    for n in externs:
        for d in shim.DEPENDS.get(n, []):
            if d not in names:
                names.append(d)
        if n not in names:
            names.append(n)
    return PRELUDE[language] + "".join(helper(n, language) for n in names)


def device_functions(source, language):
    """{device function name: [(parameter type, parameter name)]} as TVM declared them."""
    head = r'extern "C" __global__ void (?:__launch_bounds__\(\d+\) )?' if language == "cuda" else r"__kernel void "
    out = {}
    for name, params in re.findall(head + r"(\w+)\(([^)]*)\)", source):
        if name in out:
            continue
        parsed = []
        for p in filter(None, (x.strip() for x in params.split(","))):
            m = re.match(r"(.*?)(\w+)$", p)
            ptype = m.group(1).replace("__restrict__", "").replace("restrict", "").replace("__global", "").strip()
            parsed.append((ptype, m.group(2)))
        out[name] = parsed
    return out


def argument_of(param, kernel, tensors):
    """The tensor or scratch temp that TVM's parameter `b_NAME_ptr` is (translate.buf_name)."""
    name = param[:-len("_ptr")] if param.endswith("_ptr") else param
    for t in tensors:
        if "b_" + t.replace(".", "_") == name:
            return ("tensor", t)
    for t in kernel.scratch:
        if "b_" + t.replace(".", "_") == name:
            return ("scratch", t)
    raise RuntimeError("TVM's kernel %s takes %s, which is no tensor or temp" % (kernel.symbol, param))


def launches(kernels, source, language, tensors):
    """[(kernel, device function name, [(parameter type, what it is)])], in launch order."""
    functions = device_functions(source, language)
    out = []
    for k in kernels:
        # The default route builds one PrimFunc per kernel, whose device function TVM names
        # <symbol>_kernel; a tuned PrimFunc's kernels carry the names TVM gave them (gpu_tune.py).
        name = getattr(k, "device_function", k.symbol + "_kernel")
        if name not in functions:
            raise RuntimeError("TVM's %s source has no kernel %s (it has %s)" % (language, name, ", ".join(functions)))
        out.append((k, name, [(t, argument_of(p, k, tensors)) for t, p in functions[name]]))
    return out


def scratch_temps(kernels):
    temps = {}
    for k in kernels:
        temps.update(k.scratch)
    return temps


def cuda_source(func, signature, kernels, externs, tvm_source):
    tensors = [b["name"] for b in func["buffers"] if b["role"] in ("input", "output")]
    temps = scratch_temps(kernels)
    params = [p["name"] for p in func["params"]]
    host = ["", "#if !defined(__CUDACC_RTC__) /* the host side */"]
    signature = signature.strip().rstrip(";")
    if temps:
        host.append("/* The temps TVM's kernels share, in the workspace the harness allocates (docs/ABI.md). */")
        host.append('extern "C" int64_t ekb_scratch_bytes(%s) {' % ", ".join("int64_t " + p for p in params))
        host += ["  (void)%s;" % p for p in params]
        host += ["  return %d;" % max(func["scratch_bytes"], 1), "}", ""]
        signature = signature[:signature.rindex(")")] + ", void* scratch)"
    host.append(signature + " {")
    host += ["  (void)%s;  /* the kernels are specialized to %s = %d */" % (p["name"], p["name"], p["value"])
             for p in func["params"]]
    for k, name, args in launches(kernels, tvm_source, "cuda", tensors):
        values = []
        for ptype, (what, n) in args:
            if what == "tensor":
                values.append("(%s)%s" % (ptype, n))
            else:
                values.append("(%s)((char*)scratch + %d)" % (ptype, temps[n][2]))
        host.append("  %s<<<%d, %d, 0, stream>>>(%s);" % (name, k.blocks, k.threads, ", ".join(values)))
    host += ["}", "#endif /* the host side */", ""]
    return ("/* Generated by ekb's TVM bridge (python/ekb_tvm): TVM's CUDA kernels, launched by ekb_main. */\n"
            + helpers(externs, "cuda") + "\n" + tvm_source + "\n".join(host))


def opencl_source(func, kernels, externs, tvm_source):
    tensors = [b["name"] for b in func["buffers"] if b["role"] in ("input", "output")]
    temps = scratch_temps(kernels)
    lines = ["/* ekb-launch"]
    for n, (t, count, _) in sorted(temps.items()):
        lines.append("scratch ekb_tvm_%s %d" % (n.replace(".", "_"), max(count * ELEMENT_BYTES[t], 1)))
    for k, name, args in launches(kernels, tvm_source, "opencl", tensors):
        names = [n if what == "tensor" else "ekb_tvm_" + n.replace(".", "_") for _, (what, n) in args]
        lines.append("kernel %s global=[%d] local=[%d] args=[%s]" % (name, k.blocks * k.threads, k.threads,
                                                                      ", ".join(names)))
    lines.append("*/")
    return ("/* Generated by ekb's TVM bridge (python/ekb_tvm): TVM's OpenCL kernels and their launches. */\n"
            + helpers(externs, "opencl") + "\n" + tvm_source + "\n" + "\n".join(lines) + "\n")
