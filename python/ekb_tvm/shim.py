"""The C translation unit the cpu backend compiles for a TVM kernel (docs/TVM.md, "The artifact").

It holds TVM's code as assembly (its LLVM's output for the kernel, one top-level asm statement),
and in C around it:
  - `ekb_main` with the kernel ABI's signature (docs/ABI.md), which describes each tensor as a
    DLTensor and calls TVM's packed function with them;
  - what that code imports from a TVM runtime, defined here instead, so that nothing of TVM is
    loaded at run time: the workspace allocator, the parallel launcher (OpenMP) and its barrier,
    the error setter;
  - the helpers the translated TIR calls (translate.py): half conversions, saturating float ->
    integer conversions, the quantization intrinsics, with the native emitter's definitions.
"""

import re

DLPACK_CODES = {  # DLDataType of each IR type: (code, bits); kDLInt 0, kDLUInt 1, kDLFloat 2, kDLBool 6
    "bool": (1, 8),  # uint8 in memory (translate.BUFFER_DTYPES)
    "i8": (0, 8),
    "u8": (1, 8),
    "i16": (0, 16),
    "i32": (0, 32),
    "i64": (0, 64),
    "f16": (1, 16),  # uint16 bit patterns (translate.py)
    "bf16": (1, 16),
    "f32": (2, 32),
    "f64": (2, 64),
}

PRELUDE = r'''
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
/* OpenMP's runtime (the cpu backend compiles with -fopenmp), declared without needing omp.h. */
int omp_get_max_threads(void);
int omp_get_num_threads(void);
int omp_get_thread_num(void);

/* DLPack and tvm-ffi's packed calling convention (tvm/ffi/c_api.h), as far as the call needs. */
typedef struct { int32_t device_type; int32_t device_id; } ekb_tvm_DLDevice;
typedef struct { uint8_t code; uint8_t bits; uint16_t lanes; } ekb_tvm_DLDataType;
typedef struct {
  void* data;
  ekb_tvm_DLDevice device;
  int32_t ndim;
  ekb_tvm_DLDataType dtype;
  int64_t* shape;
  int64_t* strides;
  uint64_t byte_offset;
} ekb_tvm_DLTensor;
typedef struct {
  int32_t type_index;
  uint32_t zero_padding;
  union { int64_t v_int64; double v_float64; void* v_ptr; };
} ekb_tvm_Any;
enum { ekb_tvm_kNone = 0, ekb_tvm_kDLTensorPtr = 7 };

/* What TVM's code imports from its runtime (tvm/runtime/c_backend_api.h, tvm/ffi/c_api.h). */
void* TVMBackendAllocWorkspace(int device_type, int device_id, uint64_t nbytes, int dtype_code, int dtype_bits) {
  (void)device_type; (void)device_id; (void)dtype_code; (void)dtype_bits;
  return aligned_alloc(64, (size_t)((nbytes + 63) / 64 * 64));
}
int TVMBackendFreeWorkspace(int device_type, int device_id, void* ptr) {
  (void)device_type; (void)device_id;
  free(ptr);
  return 0;
}
typedef struct { void* sync_handle; int32_t num_task; } TVMParallelGroupEnv;
typedef int (*FTVMParallelLambda)(int task_id, TVMParallelGroupEnv* penv, void* cdata);
int TVMBackendParallelLaunch(FTVMParallelLambda flambda, void* cdata, int num_task) {
  int failed = 0;
  int threads = num_task > 0 ? num_task : omp_get_max_threads();
#pragma omp parallel num_threads(threads)
  {
    TVMParallelGroupEnv env = {0, omp_get_num_threads()};
    if (flambda(omp_get_thread_num(), &env, cdata) != 0) {
#pragma omp atomic write
      failed = 1;
    }
  }
  return failed ? -1 : 0;
}
int TVMBackendParallelBarrier(int task_id, TVMParallelGroupEnv* penv) {
  (void)task_id; (void)penv;
#pragma omp barrier
  return 0;
}
static char ekb_tvm_error[1024];
void TVMFFIErrorSetRaisedFromCStr(const char* kind, const char* message) {
  snprintf(ekb_tvm_error, sizeof ekb_tvm_error, "%s: %s", kind, message);
}
void TVMFFIErrorSetRaisedFromCStrParts(const char* kind, const char** parts, int32_t num_parts) {
  size_t used = (size_t)snprintf(ekb_tvm_error, sizeof ekb_tvm_error, "%s: ", kind);
  for (int32_t i = 0; i < num_parts && used < sizeof ekb_tvm_error; ++i)
    used += (size_t)snprintf(ekb_tvm_error + used, sizeof ekb_tvm_error - used, "%s", parts[i]);
}
void TVMAPISetLastError(const char* message) { TVMFFIErrorSetRaisedFromCStr("Error", message); }
'''

# Helpers take no argument narrower than 32 bits: TVM's LLVM passes an i8/i16 without the zero or
# sign extension that a C callee compiled by clang assumes.
HELPERS = {
    "ekb_tvm_f16_to_f32": "float ekb_tvm_f16_to_f32(uint32_t h) { return ekb_f16_to_f32((uint16_t)h); }\n",
    "ekb_tvm_f32_to_f16": "uint16_t ekb_tvm_f32_to_f16(float f) { return ekb_f32_to_f16(f); }\n",
    "ekb_tvm_bf16_to_f32": "float ekb_tvm_bf16_to_f32(uint32_t h) { return ekb_bf16_to_f32((uint16_t)h); }\n",
    "ekb_tvm_f32_to_bf16": "uint16_t ekb_tvm_f32_to_bf16(float f) { return ekb_f32_to_bf16(f); }\n",
    "ekb_tvm_abs_i32": "int32_t ekb_tvm_abs_i32(int32_t a) { return (int32_t)(a < 0 ? 0u - (uint32_t)a : (uint32_t)a); }\n",
    "ekb_tvm_abs_i64": "int64_t ekb_tvm_abs_i64(int64_t a) { return (int64_t)(a < 0 ? 0u - (uint64_t)a : (uint64_t)a); }\n",
    # 64-bit arithmetic that wraps (translate.Translator.wrap_int): C's unsigned arithmetic does.
    "ekb_tvm_wrapping_add_i64": "int64_t ekb_tvm_wrapping_add_i64(int64_t a, int64_t b) { return (int64_t)((uint64_t)a + (uint64_t)b); }\n",
    "ekb_tvm_wrapping_sub_i64": "int64_t ekb_tvm_wrapping_sub_i64(int64_t a, int64_t b) { return (int64_t)((uint64_t)a - (uint64_t)b); }\n",
    "ekb_tvm_wrapping_mul_i64": "int64_t ekb_tvm_wrapping_mul_i64(int64_t a, int64_t b) { return (int64_t)((uint64_t)a * (uint64_t)b); }\n",
    "ekb_tvm_nonzero_f32": "_Bool ekb_tvm_nonzero_f32(float x) { return x != 0 && x == x; }\n",
    "ekb_tvm_nonzero_f64": "_Bool ekb_tvm_nonzero_f64(double x) { return x != 0 && x == x; }\n",
    "ekb_tvm_floormod_i64": (
        "int64_t ekb_tvm_floormod_i64(int64_t a, int64_t b) {\n"
        "  if (b == -1) return 0;\n"
        "  int64_t r = a % b;\n"
        "  return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;\n}\n"),
    "ekb_tvm_mirror_index": (
        "int64_t ekb_tvm_mirror_index(int64_t x, int64_t n) {\n"
        "  if ((uint64_t)x < (uint64_t)n) return x;\n"
        "  if (n == 1) return 0;\n"
        "  int64_t p = 2 * (n - 1), m = ekb_tvm_floormod_i64(x, p);\n"
        "  return m < n ? m : p - m;\n}\n"),
    "ekb_tvm_rdmulh": (
        "int32_t ekb_tvm_rdmulh(int32_t a, int32_t b) {\n"
        "  if (a == b && a == (-2147483647 - 1)) return 2147483647;\n"
        "  int64_t ab = (int64_t)a * (int64_t)b;\n"
        "  int64_t nudge = ab >= 0 ? ((int64_t)1 << 30) : (1 - ((int64_t)1 << 30));\n"
        "  return (int32_t)((ab + nudge) / ((int64_t)1 << 31));\n}\n"),
    "ekb_tvm_rshift": (
        "int32_t ekb_tvm_rshift(int32_t x, int32_t exponent) {\n"
        "  int32_t mask = (int32_t)(((int64_t)1 << exponent) - 1);\n"
        "  int32_t remainder = x & mask;\n"
        "  int32_t threshold = (mask >> 1) + (x < 0 ? 1 : 0);\n"
        "  return (x >> exponent) + (remainder > threshold ? 1 : 0);\n}\n"),
    "ekb_tvm_requant": (
        "int32_t ekb_tvm_requant(int32_t x, int32_t multiplier, int32_t shift) {\n"
        "  int32_t left = shift > 0 ? shift : 0, right = shift > 0 ? 0 : -shift;\n"
        "  int32_t shifted = (int32_t)((uint32_t)x * ((uint32_t)1 << left));\n"
        "  return ekb_tvm_rshift(ekb_tvm_rdmulh(shifted, multiplier), right);\n}\n"),
}
DEPENDS = {"ekb_tvm_mirror_index": ["ekb_tvm_floormod_i64"], "ekb_tvm_requant": ["ekb_tvm_rdmulh", "ekb_tvm_rshift"]}

INT_TYPES = {"i8": ("int8_t", -(1 << 7), (1 << 7) - 1), "u8": ("uint8_t", 0, 255),
             "i16": ("int16_t", -(1 << 15), (1 << 15) - 1), "i32": ("int32_t", -(1 << 31), (1 << 31) - 1),
             "i64": ("int64_t", -(1 << 63), (1 << 63) - 1)}


def int_literal(v):
    if v == -(1 << 63):
        return "(-9223372036854775807LL - 1)"
    if v == -(1 << 31):
        return "(-2147483647 - 1)"
    return "%dLL" % v


def helper(name):
    if name in HELPERS:
        return HELPERS[name]
    if name.startswith("ekb_tvm_cvt_"):  # ekb_tvm_cvt_<int>_<float>: truncate, saturate, NaN -> 0
        _, _, _, it, ft = name.split("_")
        ct, lo, hi = INT_TYPES[it]
        fc = "float" if ft == "f32" else "double"
        return ("%s %s(%s x) {\n  if (x != x) return 0;\n  if (x <= (%s)%s) return (%s)%s;\n"
                "  if (x >= (%s)%s) return (%s)%s;\n  return (%s)x;\n}\n") % (
                    ct, name, fc, fc, int_literal(lo), ct, int_literal(lo), fc, int_literal(hi), ct,
                    int_literal(hi), ct)
    raise ValueError("no shim helper " + name)


def asm_statement(asm):
    """TVM's assembly as one file-scope asm statement, without its file, location and debug-info
    directives (the C compiler writes its own)."""
    keep = []
    in_debug = False
    for line in asm.splitlines():
        s = line.strip()
        if s.startswith(".section"):
            in_debug = s.split()[1].strip('"').startswith(".debug")
            if in_debug:
                continue
        elif s in (".text", ".data", ".bss") or s.startswith((".text\t", ".data\t")):
            in_debug = False
        if in_debug or s.startswith((".file", ".loc", ".ident", ".cfi_sections")):
            continue
        keep.append(line)
    # Its local labels (.L...) renamed apart from the C compiler's own in the same file.
    body = re.sub(r"(?<![\w.$])\.L(?=[\w.$])", ".Lekb_tvm_", "\n".join(keep))
    escaped = body.replace("\\", "\\\\").replace('"', '\\"')
    out = ["__asm__("]
    for line in escaped.split("\n"):
        out.append('"%s\\n"' % line)
    out.append(");")
    return "\n".join(out) + "\n"


# The runtime functions TVM's code calls through pointers it defines (weak, null until a TVM
# module loader fills them in): the shim fills them with its own definitions.
RUNTIME_POINTERS = ("TVMBackendAllocWorkspace", "TVMBackendFreeWorkspace", "TVMBackendParallelLaunch",
                    "TVMBackendParallelBarrier", "TVMAPISetLastError", "TVMFFIErrorSetRaisedFromCStr",
                    "TVMFFIErrorSetRaisedFromCStrParts")


def runtime_pointers(asm):
    found = re.findall(r"^\s*\.weak\s+__(TVM\w+)", asm, re.M)
    unknown = [f for f in found if f not in RUNTIME_POINTERS]
    if unknown:
        raise RuntimeError("TVM's code imports runtime functions the shim lacks: " + ", ".join(unknown))
    return [f for f in RUNTIME_POINTERS if f in found]


def helpers_source(externs):
    """The C definitions of the helpers `externs` names, each after those it calls."""
    names = []
    for n in externs:
        for d in DEPENDS.get(n, []):
            if d not in names:
                names.append(d)
        if n not in names:
            names.append(n)
    return "".join(helper(n) for n in names)


def shim_source(func, signature, packed_symbol, externs, asm):
    """The C translation unit: prelude, helpers, TVM's assembly, ekb_main."""
    parts = ["/* Generated by ekb's TVM bridge (python/ekb_tvm): TVM's code for %s and the C around it. */\n"
             % func["name"], PRELUDE, helpers_source(externs)]
    parts.append("\n/* TVM's LLVM output for the kernel. */\n")
    parts.append(asm_statement(asm))
    pointers = runtime_pointers(asm)
    for f in pointers:
        parts.append("extern void* __%s;\n" % f)
    parts.append("\nint32_t %s(void* self, const ekb_tvm_Any* args, int32_t num_args, ekb_tvm_Any* result);\n\n"
                 % packed_symbol)
    tensors = [b for b in func["buffers"] if b["role"] in ("input", "output")]
    body = [signature.strip().rstrip(";") + " {"]
    for f in pointers:
        body.append("  __%s = (void*)&%s;" % (f, f))
    n = len(tensors)
    body.append("  int64_t ekb_tvm_shapes[%d];" % max(n, 1))
    body.append("  ekb_tvm_DLTensor ekb_tvm_t[%d];" % max(n, 1))
    body.append("  ekb_tvm_Any ekb_tvm_args[%d];" % max(n, 1))
    for i, b in enumerate(tensors):
        count = 1
        for d in b["shape"]:
            count *= d
        code, bits = DLPACK_CODES[b["type"]]
        body.append("  ekb_tvm_shapes[%d] = %d;" % (i, count))
        body.append("  ekb_tvm_t[%d] = (ekb_tvm_DLTensor){(void*)%s, {1, 0}, 1, {%d, %d, 1}, &ekb_tvm_shapes[%d], 0, 0};"
                    % (i, b["name"], code, bits, i))
        body.append("  ekb_tvm_args[%d].type_index = ekb_tvm_kDLTensorPtr; ekb_tvm_args[%d].zero_padding = 0; ekb_tvm_args[%d].v_ptr = &ekb_tvm_t[%d];"
                    % (i, i, i, i))
    for p in func["params"]:
        body.append("  (void)%s;  /* the kernel is specialized to %s = %d */" % (p["name"], p["name"], p["value"]))
    body.append("  ekb_tvm_Any ekb_tvm_result; memset(&ekb_tvm_result, 0, sizeof ekb_tvm_result); ekb_tvm_result.type_index = ekb_tvm_kNone;")
    body.append("  if (%s(0, ekb_tvm_args, %d, &ekb_tvm_result) != 0) {" % (packed_symbol, n))
    body.append('    fprintf(stderr, "TVM kernel failed: %s\\n", ekb_tvm_error);')
    body.append("    abort();")
    body.append("  }")
    body.append("}")
    parts.append("\n".join(body) + "\n")
    return "".join(parts)
