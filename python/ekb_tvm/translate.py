"""The loop IR (JSON, src/tvm/lir_json.cpp) as a TVMScript PrimFunc.

Every statement becomes the imperative TIR statement of the same meaning (docs/TVM.md,
"Translation"). The IR's exact semantics are kept where TIR's differ:
  - integer +, -, * and negation wrap: unless the IR proved they cannot (no_wrap), on cpu 32-bit
    ones compute in int64 and narrower ones in int32, truncated back, and 64-bit ones are shim
    helpers (TVM's LLVM marks 32/64-bit arithmetic nsw or nuw); on gpu 32- and 64-bit ones compute
    in the unsigned type, which the printed C does wrap;
  - division and modulo of integers are floor division and floor modulo;
  - float min/max propagate NaN (llvm.minimum / llvm.maximum);
  - a select and the operands of && / || are evaluated only when the C ternary and short-circuit
    operators would (tirx.if_then_else, which the LLVM code generator lowers to branches);
  - float -> integer conversions truncate, saturate and send NaN to 0; half types are their bit
    patterns (uint16) converted by helpers; these and the quantization intrinsics are external
    functions that the C shim defines (shim.py), with the native emitter's definitions.
"""

import math
import re
import struct

DTYPES = {
    "bool": "bool",  # values; in memory a bool is one byte (BUFFER_DTYPES)
    "i8": "int8",
    "u8": "uint8",
    "i16": "int16",
    "i32": "int32",
    "i64": "int64",
    "index": "int64",
    "f16": "uint16",  # bit patterns: converted by ekb_tvm_f16_to_f32 / ekb_tvm_f32_to_f16
    "bf16": "uint16",
    "f32": "float32",
    "f64": "float64",
}
BUFFER_DTYPES = dict(DTYPES, bool="uint8")
INT_RANGE = {
    "i8": (-(1 << 7), (1 << 7) - 1),
    "u8": (0, (1 << 8) - 1),
    "i16": (-(1 << 15), (1 << 15) - 1),
    "i32": (-(1 << 31), (1 << 31) - 1),
    "i64": (-(1 << 63), (1 << 63) - 1),
    "index": (-(1 << 63), (1 << 63) - 1),
}
FLOATS = ("f32", "f64")
HALVES = ("f16", "bf16")
UNSIGNED_OF = {"i32": "uint32", "i64": "uint64", "index": "uint64"}

# Math functions called as the C library's, so that results match the native compiler's.
LIBM = {
    "exp": "exp",
    "log": "log",
    "log2": "log2",
    "exp2": "exp2",
    "tanh": "tanh",
    "erf": "erf",
    "sin": "sin",
    "cos": "cos",
    "tan": "tan",
    "atan": "atan",
    "atan2": "atan2",
    "pow": "pow",
    "round": "round",
    "fma": "fma",
}
# Exact operations that LLVM has intrinsics for.
LLVM_UNARY = {"sqrt": "sqrt", "floor": "floor", "ceil": "ceil", "trunc": "trunc", "round_even": "nearbyint"}


class TranslationError(Exception):
    pass


def negative_constant(x):
    """c when the expression text x is a 32- or 64-bit constant -c (c below 2^63: a uint64 constant
    passes TVM's FFI only below it), else None."""
    m = re.fullmatch(r"T\.int(?:32|64)\(-(\d+)\)", x)
    return int(m.group(1)) if m and int(m.group(1)) < 1 << 63 else None


def half_bits(t, x):
    """The f16 or bf16 bit pattern of x, rounded from f32 to nearest even as ekb_abi.h's
    ekb_f32_to_f16 / ekb_f32_to_bf16 round (NaN stays NaN, too large becomes infinity)."""
    if math.isnan(x):
        return 0x7E00 if t == "f16" else 0x7FC0
    try:
        f32 = struct.unpack("<I", struct.pack("<f", x))[0]
    except OverflowError:  # beyond f32: infinity
        f32 = 0x7F800000 | (0x80000000 if x < 0 else 0)
    if t == "bf16":
        return (f32 + 0x7FFF + ((f32 >> 16) & 1)) >> 16
    f = struct.unpack("<f", struct.pack("<I", f32))[0]
    try:
        return struct.unpack("<H", struct.pack("<e", f))[0]
    except OverflowError:  # beyond f16: infinity
        return 0x7C00 | (0x8000 if f < 0 else 0)


def is_int(t):
    return t in INT_RANGE


def tag(t):
    return "i64" if t == "index" else t


class Translator:
    def __init__(self, func, symbol):
        self.func = func
        self.symbol = symbol
        self.lines = []
        self.mutable = set()  # DeclareVar names: one-element local buffers
        self.buffer_types = {b["name"]: b["type"] for b in func["buffers"]}
        self.externs = set()  # helper functions the shim must define

    # ------------------------------------------------------------------ names
    @staticmethod
    def var_name(n):
        return "v_" + n.replace(".", "_")

    @staticmethod
    def buf_name(n):
        return "b_" + n.replace(".", "_")

    # ------------------------------------------------------------------ expressions
    def imm(self, t, v):
        d = DTYPES[t]
        if t == "bool":
            return "T.bool(%s)" % ("True" if v else "False")
        if is_int(t):
            return "T.%s(%d)" % (d, v)
        if t in FLOATS:
            if isinstance(v, str):  # nan, inf, -inf: through their bit patterns
                x = float(v)
                if t == "f32":
                    bits = {"nan": 0x7FC00000, "inf": 0x7F800000, "-inf": 0xFF800000}[v]
                    return 'T.reinterpret("float32", T.uint32(%d))' % bits
                # int64 bits: a uint64 constant above 2^63 does not pass TVM's FFI
                bits = {"nan": 0x7FF8000000000000, "inf": 0x7FF0000000000000, "-inf": -0x10000000000000}[v]
                return 'T.reinterpret("float64", T.int64(%d))' % bits
            return "T.%s(%r)" % (d, float(v))
        if t in HALVES:  # its bit pattern, as tensors of the type hold it
            return "T.uint16(%d)" % half_bits(t, float(v))
        raise TranslationError("a %s constant" % t)

    def math_name(self, name, t):
        """The C library's function of that name for t (expf for f32)."""
        return name + ("f" if t == "f32" else "")

    def extern(self, t, name, args):
        self.externs.add(name)
        return 'T.call_pure_extern("%s", "%s", %s)' % (DTYPES[t], name, ", ".join(args))

    def llvm(self, t, name, args):
        """An overloaded LLVM intrinsic (llvm.NAME) at the type of its operands."""
        return 'T.call_llvm_pure_intrin("%s", "llvm.%s", %s)' % (DTYPES[t], name, ", ".join(args))

    def cast_to(self, t, x):
        return 'T.Cast("%s", %s)' % (DTYPES[t], x)

    def wrap_int(self, t, op, a, b=None):
        """An integer + - * (or negation when b is None) that wraps at t's width. TVM's LLVM marks
        32- and 64-bit arithmetic nsw when signed and nuw when unsigned, so an operation that wraps
        is poison in either type (img.remap's `x0 + 1` at x0 = -1, added as uint64, let LLVM drop
        the border pixels). A 32-bit one is exact in int64 and truncated back, a narrower one in
        int32 (TVM marks nothing below 32 bits), and a 64-bit one is the shim's, in C's unsigned
        arithmetic."""
        if t in ("i64", "index"):
            name = "ekb_tvm_wrapping_%s_i64" % {"+": "add", "-": "sub", "*": "mul"}[op]
            return self.extern(t, name, ["T.int64(0)", a] if b is None else [a, b])
        wide = "i64" if t == "i32" else "i32"
        wa = self.cast_to(wide, a)
        if b is None:
            return self.cast_to(t, "(%s - %s)" % (self.imm(wide, 0), wa))
        return self.cast_to(t, "(%s %s %s)" % (wa, op, self.cast_to(wide, b)))

    def expr(self, e):
        k = e["k"]
        t = e["type"]
        if k == "int":
            return self.imm(t, e["v"])
        if k == "float":
            return self.imm(t, e["v"])
        if k == "var":
            if e["name"] in self.mutable:
                return "%s[0]" % self.var_name(e["name"])
            return self.var_name(e["name"])
        if k == "load":
            if len(e["indices"]) != 1:
                raise TranslationError("a load of %s is not flat" % e["buffer"])
            text = "%s[%s]" % (self.buf_name(e["buffer"]), self.expr(e["indices"][0]))
            return "(%s != T.uint8(0))" % text if t == "bool" else text
        if k == "unary":
            a = self.expr(e["args"][0])
            if e["op"] == "not":
                return "T.Not(%s)" % a
            if t in FLOATS:
                return "(-%s)" % a
            if e["no_wrap"]:
                return "(%s(0) - %s)" % ("T." + DTYPES[t], a)
            return self.wrap_int(t, "-", a)
        if k == "binary":
            return self.binary(e)
        if k == "select":
            c, a, b = (self.expr(x) for x in e["args"])
            return "T.if_then_else(%s, %s, %s)" % (c, a, b)
        if k == "call":
            return self.call(e)
        if k == "cast":
            return self.cast(e)
        raise TranslationError("expression kind %s" % k)

    def binary(self, e):
        op = e["op"]
        x, y = e["args"]
        t = x["type"]  # operand type
        a, b = self.expr(x), self.expr(y)
        fl = t in FLOATS
        if op in ("add", "sub", "mul"):
            sym = {"add": "+", "sub": "-", "mul": "*"}[op]
            if fl or e["no_wrap"]:
                return "(%s %s %s)" % (a, sym, b)
            return self.wrap_int(e["type"], sym, a, b)
        if op == "div":
            return "(%s / %s)" % (a, b) if fl else "T.floordiv(%s, %s)" % (a, b)
        if op == "mod":
            if fl:
                raise TranslationError("float modulo")
            return "T.floormod(%s, %s)" % (a, b)
        if op == "truncdiv":
            return "T.truncdiv(%s, %s)" % (a, b)
        if op == "truncmod":
            return "T.truncmod(%s, %s)" % (a, b)
        if op in ("min", "max"):
            if fl:
                return self.llvm(t, "minimum" if op == "min" else "maximum", [a, b])
            return "T.%s(%s, %s)" % (op, a, b)
        cmp = {"eq": "==", "ne": "!=", "lt": "<", "le": "<=", "gt": ">", "ge": ">="}
        if op in cmp and t == "bool":
            # Compared as int32: TVM 0.27's LLVM code generator compares two booleans as floats
            # (`fcmp one i1`), which LLVM's verifier refuses (audio.rms_zcr's sign changes).
            return "(%s %s %s)" % (self.cast_to("i32", a), cmp[op], self.cast_to("i32", b))
        if op in cmp:
            return "(%s %s %s)" % (a, cmp[op], b)
        if op == "and":
            return "T.if_then_else(%s, %s, T.bool(False))" % (a, b)
        if op == "or":
            return "T.if_then_else(%s, T.bool(True), %s)" % (a, b)
        if op in ("bitand", "bitor", "bitxor"):
            f = {"bitand": "bitwise_and", "bitor": "bitwise_or", "bitxor": "bitwise_xor"}[op]
            return "T.%s(%s, %s)" % (f, a, b)
        if op == "shl":
            # In a wider type, so that a bit shifted out of the type's width is no undefined
            # behaviour; signed when the type is narrower than 64 bits: TVM's bound analysis takes
            # a cast from uint64 to be non-negative, and then dropped qnn.hard_swish's lower clamp
            # of `hi << k` (clamp(hi << k, -32768, 32767) lost its -32768 on cuda and opencl).
            wide = "uint64" if DTYPES[e["type"]] in ("int64", "uint64") else "int64"
            return 'T.Cast("%s", T.shift_left(T.Cast("%s", %s), T.Cast("%s", %s)))' % (
                DTYPES[e["type"]], wide, a, wide, b)
        if op == "shr":
            return 'T.Cast("%s", T.shift_right(T.Cast("int64", %s), T.Cast("int64", %s)))' % (
                DTYPES[e["type"]], a, b)
        raise TranslationError("binary operator %s" % op)

    def call(self, e):
        fn = e["fn"]
        t = e["type"]
        args = [self.expr(x) for x in e["args"]]
        if fn in LIBM:
            if t not in FLOATS:
                raise TranslationError("%s of %s" % (fn, t))
            return 'T.call_pure_extern("%s", "%s", %s)' % (DTYPES[t], self.math_name(LIBM[fn], t), ", ".join(args))
        if fn in LLVM_UNARY:
            return self.llvm(t, LLVM_UNARY[fn], args)
        if fn == "rsqrt":
            return "(%s / %s)" % (self.imm(t, 1.0), self.llvm(t, "sqrt", args))
        if fn == "sigmoid":
            one = self.imm(t, 1.0)
            name = self.math_name("exp", t)
            return '(%s / (%s + T.call_pure_extern("%s", "%s", (-%s))))' % (one, one, DTYPES[t], name, args[0])
        if fn == "abs":
            if t in FLOATS:
                return self.llvm(t, "fabs", args)
            if t in ("i64", "index"):
                return self.extern(t, "ekb_tvm_abs_i64", args)
            if t == "i32":
                return self.extern(t, "ekb_tvm_abs_i32", args)
            # narrower: abs(-128) wraps in i8
            return self.cast_to(t, self.extern("i32", "ekb_tvm_abs_i32", [self.cast_to("i32", args[0])]))
        if fn in ("rdmulh", "rshift", "requant"):
            return self.extern("i32", "ekb_tvm_" + fn, args)
        if fn == "mirror_index":
            return self.extern("index", "ekb_tvm_mirror_index", args)
        raise TranslationError("intrinsic %s" % fn)

    def cast(self, e):
        to = e["type"]
        x = e["args"][0]
        frm = x["type"]
        a = self.expr(x)
        if to == frm or (DTYPES[to] == DTYPES[frm] and to not in HALVES and frm not in HALVES):
            return a
        if to in HALVES:
            if frm != "f32":
                a = self.cast_to("f32", a)
            return self.extern(to, "ekb_tvm_f32_to_" + to, [a])
        if frm in HALVES:
            a = self.extern("f32", "ekb_tvm_%s_to_f32" % frm, ['T.Cast("uint32", %s)' % a])
            frm = "f32"
            if to == frm:
                return a
        if frm in FLOATS:
            if to in FLOATS:
                return self.cast_to(to, a)
            if to == "bool":
                return self.extern("bool", "ekb_tvm_nonzero_" + frm, [a])
            return self.extern(to, "ekb_tvm_cvt_%s_%s" % (tag(to), frm), [a])
        # from an integer or bool
        if to in FLOATS:
            return self.cast_to(to, a)
        if to == "bool":
            return "(%s != %s)" % (a, self.imm(frm, 0))
        lo, hi = INT_RANGE[to]
        if frm == "bool":
            widening = True
        else:
            flo, fhi = INT_RANGE[frm]
            widening = lo <= flo and fhi <= hi
        if e["saturate"] and not widening:
            wide = self.cast_to("i64", a)
            return self.cast_to(to, "T.max(T.min(%s, T.int64(%d)), T.int64(%d))" % (wide, hi, lo))
        return self.cast_to(to, a)

    # ------------------------------------------------------------------ statements
    def emit(self, depth, text):
        self.lines.append("    " * depth + text)

    def stmt(self, s, depth):
        k = s["k"]
        if k == "block":
            if not s["stmts"]:
                self.emit(depth, "T.evaluate(0)")
            for x in s["stmts"]:
                self.stmt(x, depth)
        elif k == "for" and s["kind"] == "serial" and not (s["min"]["k"] == "int" and s["min"]["v"] == 0):
            # Counted from 0, the variable bound in the body: TVM 0.27 miscompiles a serial loop
            # that does not start at 0 when its bounds depend on an enclosing loop's variable:
            # its cpu pipeline runs audio.lpc's `for j in [1, +(i - 1))` as if it never ran, its
            # gpu pipeline drops an iteration of linalg.nussinov's inner loops and reads shifted rows.
            counter = self.var_name(s["var"]) + "_from0"
            self.emit(depth, "for %s in T.serial(T.int64(0), %s):" % (counter, self.expr(s["extent"])))
            self.emit(depth + 1, "%s: T.int64 = %s + %s" % (self.var_name(s["var"]), self.expr(s["min"]), counter))
            self.stmt(s["body"], depth + 1)
        elif k == "for":
            kind = {"serial": "T.serial", "parallel": "T.parallel", "vectorized": "T.vectorized",
                    "unrolled": "T.unroll"}[s["kind"]]
            lo = self.expr(s["min"])
            ext = self.expr(s["extent"])
            self.emit(depth, "for %s in %s(%s, %s + %s):" % (self.var_name(s["var"]), kind, lo, lo, ext))
            self.stmt(s["body"], depth + 1)
        elif k == "store":
            if len(s["indices"]) != 1:
                raise TranslationError("a store to %s is not flat" % s["buffer"])
            value = self.expr(s["value"])
            if self.buffer_types.get(s["buffer"]) == "bool":
                value = 'T.Cast("uint8", %s)' % value
            self.emit(depth, "%s[%s] = %s" % (self.buf_name(s["buffer"]), self.expr(s["indices"][0]), value))
        elif k == "assign":
            self.emit(depth, "%s[0] = %s" % (self.var_name(s["var"]), self.expr(s["value"])))
        elif k == "let":
            self.emit(depth, "%s: T.%s = %s" % (self.var_name(s["var"]), DTYPES[s["type"]], self.expr(s["value"])))
            self.stmt(s["body"], depth)
        elif k == "declare":
            n = self.var_name(s["var"])
            self.emit(depth, '%s = T.alloc_buffer((1,), "%s", scope="local")' % (n, DTYPES[s["type"]]))
            init = self.expr(s["value"])
            self.mutable.add(s["var"])
            self.emit(depth, "%s[0] = %s" % (n, init))
            self.stmt(s["body"], depth)
        elif k == "if":
            self.emit(depth, "if %s:" % self.expr(s["cond"]))
            self.stmt(s["then"], depth + 1)
            if "else" in s:
                self.emit(depth, "else:")
                self.stmt(s["else"], depth + 1)
        elif k == "allocate":
            self.buffer_types[s["buffer"]] = s["type"]
            self.emit(depth, '%s = T.alloc_buffer((%s,), "%s")' % (self.buf_name(s["buffer"]), self.expr(s["extent"]),
                                                                 BUFFER_DTYPES[s["type"]]))
            self.stmt(s["body"], depth)
        else:
            raise TranslationError("statement kind %s" % k)

    def script(self):
        f = self.func
        args = [b for b in f["buffers"] if b["role"] in ("input", "output")]
        sig = []
        for b in args:
            n = 1
            for d in b["shape"]:
                n *= d
            sig.append('%s: T.Buffer((%d,), "%s")' % (self.buf_name(b["name"]), n, BUFFER_DTYPES[b["type"]]))
        self.lines = []
        self.emit(0, "# from tvm.script import tirx as T")
        self.emit(0, "@T.prim_func")
        self.emit(0, "def %s(%s):" % (self.symbol, ", ".join(sig)))
        self.emit(1, 'T.func_attr({"global_symbol": "%s", "tir.noalias": True})' % self.symbol)
        self.stmt(f["body"], 1)
        return "\n".join(self.lines) + "\n"


def to_tvmscript(func, symbol):
    """(TVMScript text, the shim helpers it calls)."""
    tr = Translator(func, symbol)
    text = tr.script()
    return text, sorted(tr.externs)


# ---------------------------------------------------------------------- cuda and opencl
class Kernel:
    """One kernel of the gpu route: its PrimFunc's symbol and TVMScript, the launch it was written
    for (blocks x threads, one dimension), and the scratch temps it takes as buffers."""

    def __init__(self, symbol, script, blocks, threads, scratch):
        self.symbol = symbol
        self.script = script
        self.blocks = blocks
        self.threads = threads
        self.scratch = scratch  # {buffer name: (IR type, element count, byte offset in the workspace)}


def constant(e, what):
    if e["k"] != "int":
        raise TranslationError("%s is not a constant" % what)
    return e["v"]


def widen(a):
    """The narrow integer expression a, converted to int32 (exactly)."""
    return {"k": "cast", "type": "i32", "saturate": False, "args": [a]}


class GpuTranslator(Translator):
    """The translation of one Kernel of the native gpu lowering (its kernels: one per stage, the
    stage's outermost independent loops as one flat grid-stride space, or one thread) as a PrimFunc
    whose loops TVM can build for a gpu: the flat space bound to blockIdx.x x threadIdx.x, one
    iteration per thread (a guard instead of a stride: enough blocks for all of them), and every
    other loop sequential in its thread. Temps in the scratch workspace become buffer parameters
    (the wrapper passes the workspace at their offsets); the others are a thread's local arrays."""

    def __init__(self, func, symbol, language):
        super().__init__(func, symbol)
        self.language = language  # "cuda" | "opencl"
        self.grid_stride = {}  # loop variable -> (stride in the flat space, extent)
        self.scratch = {}

    def math_name(self, name, t):
        if self.language == "opencl":
            return name  # OpenCL C's math functions are overloaded
        return super().math_name(name, t)

    def llvm(self, t, name, args):
        if name in ("minimum", "maximum"):
            return self.extern(t, "ekb_tvm_f%s_%s" % ("min" if name == "minimum" else "max", t), args)
        name = {"nearbyint": "rint"}.get(name, name)
        return 'T.call_pure_extern("%s", "%s", %s)' % (DTYPES[t], self.math_name(name, t), ", ".join(args))

    def stmt(self, s, depth):
        k = s["k"]
        if k == "for" and s["kind"] == "grid_stride":
            stride, extent = self.grid_stride[s["var"]]
            lo = self.expr(s["min"])
            self.emit(depth, "%s: T.int64 = %s + T.floormod(T.floordiv(ekb_flat, T.int64(%d)), T.int64(%d))"
                      % (self.var_name(s["var"]), lo, stride, extent))
            self.stmt(s["body"], depth)
        elif k == "for" and s["kind"] != "serial":
            self.stmt(dict(s, kind="serial"), depth)  # one thread runs the loop: no vectors, no threads
        elif k == "allocate" and s["scope"] == "scratch":
            self.buffer_types[s["buffer"]] = s["type"]
            count = constant(s["extent"], "the size of " + s["buffer"])
            self.scratch[s["buffer"]] = (s["type"], count, s["scratch_offset"])
            self.stmt(s["body"], depth)
        elif k == "allocate":
            if s["scope"] == "shared":
                raise TranslationError("a shared-memory temp (a schedule's) is not translated")
            self.buffer_types[s["buffer"]] = s["type"]
            self.emit(depth, '%s = T.alloc_buffer((%s,), "%s", scope="local")' % (
                self.buf_name(s["buffer"]), self.expr(s["extent"]), BUFFER_DTYPES[s["type"]]))
            self.stmt(s["body"], depth)
        elif k == "kernel":
            raise TranslationError("a kernel inside a kernel")
        else:
            super().stmt(s, depth)

    def imm(self, t, v):
        # TVM's printers write float constants in decimal: OpenCL's with 7 significant digits
        # (%e), CUDA's doubles with 16 (its floats are exact hexadecimal). A constant that this
        # does not reproduce is given by its bits (transformer.t5_relative_bias: log(...) /
        # 2.772589 truncated to an integer differed).
        if t in FLOATS and not isinstance(v, str) and (self.language == "opencl" or t == "f64"):
            value = float(v)
            printed = float(("%e" if self.language == "opencl" else "%.16g") % value)
            if t == "f32":
                value, printed = (struct.unpack("<f", struct.pack("<f", x))[0] for x in (value, printed))
            if printed != value:
                if t == "f32":
                    bits = struct.unpack("<i", struct.pack("<f", value))[0]
                    return 'T.call_pure_extern("float32", "as_float", T.int32(%d))' % bits
                bits = struct.unpack("<q", struct.pack("<d", value))[0]
                as_double = "as_double" if self.language == "opencl" else "__longlong_as_double"
                return 'T.call_pure_extern("float64", "%s", T.int64(%d))' % (as_double, bits)
        return super().imm(t, v)

    def wrap_int(self, t, op, a, b=None):
        """An integer + - * (or negation when b is None) that wraps at t's width: 32- and 64-bit
        ones in the unsigned type, which the printed CUDA and OpenCL C do wrap (only TVM's LLVM
        marks unsigned arithmetic nuw)."""
        if t in UNSIGNED_OF:
            # Bit casts, not conversions: TVM 0.27's constant folding refuses a conversion of a
            # negative constant to an unsigned type ("cannot make uint from negative value").
            u = UNSIGNED_OF[t]
            if b is None:
                return 'T.reinterpret("%s", %s)' % (DTYPES[t], self.negate_unsigned(u, self.as_unsigned(t, a)))
            with_constant = self.wrap_with_negative_constant(t, op, a, b)
            if with_constant is not None:
                return with_constant
            ua = self.as_unsigned(t, a)
            return 'T.reinterpret("%s", %s %s %s)' % (DTYPES[t], ua, op, self.as_unsigned(t, b))
        return super().wrap_int(t, op, a, b)

    def wrap_with_negative_constant(self, t, op, a, b):
        """a op b (+ - *) in t's unsigned type where an operand is a negative constant -c, with
        the constant c instead, or None when neither operand is one. TVM 0.27's simplifier bounds
        unsigned arithmetic as if it did not wrap and folds an expression whose bound is one
        value: `x + 0xFFFFFFFF` (x + (-1) as bits) became 0xFFFFFFFF (audio.mulaw_encode's
        `(64 << i) - 1`) and `0 - x` became 0. So -c is subtracted, never added as its bits, and
        a negation is `~x + 1`."""
        u = UNSIGNED_OF[t]
        ca, cb = negative_constant(a), negative_constant(b)
        if cb is not None:  # a + (-c) = a - c; a - (-c) = a + c; a * (-c) = -(a * c)
            ua, c = self.as_unsigned(t, a), "T.%s(%d)" % (u, cb)
            text = {"+": "%s - %s" % (ua, c), "-": "%s + %s" % (ua, c),
                    "*": self.negate_unsigned(u, "%s * %s" % (ua, c))}[op]
        elif ca is not None:  # (-c) + b = b - c; (-c) - b = -(b + c); (-c) * b = -(b * c)
            ub, c = self.as_unsigned(t, b), "T.%s(%d)" % (u, ca)
            text = {"+": "%s - %s" % (ub, c), "-": self.negate_unsigned(u, "%s + %s" % (ub, c)),
                    "*": self.negate_unsigned(u, "%s * %s" % (ub, c))}[op]
        else:
            return None
        return 'T.reinterpret("%s", %s)' % (DTYPES[t], text)

    @staticmethod
    def negate_unsigned(u, x):
        """-x in the unsigned type u as ~x + 1: TVM 0.27 folds `0 - x` of an unsigned x to 0."""
        return "(T.bitwise_not(%s) + T.%s(1))" % (x, u)

    def as_unsigned(self, t, x):
        """x (of the signed type t) as the unsigned type of its width: a bit cast."""
        # TVM's OpenCL printer takes the address of a reinterpreted operand, which a constant has
        # not ("&(0)"): a constant operand becomes its unsigned value instead.
        m = re.fullmatch(r"T\.int(32|64)\((-?\d+)\)", x)
        if m:
            value = int(m.group(2)) % (1 << int(m.group(1)))
            if value < 1 << 63:  # a uint64 constant above 2^63 does not pass TVM's FFI
                return "T.%s(%d)" % (UNSIGNED_OF[t], value)
        return 'T.reinterpret("%s", %s)' % (UNSIGNED_OF[t], x)

    def binary(self, e):
        x = e["args"][0]
        if e["op"] in ("div", "mod", "truncdiv", "truncmod") and x["type"] in ("i8", "u8", "i16"):
            # In int32, the quotient truncated back: TVM's OpenCL printer writes an 8/16-bit floor
            # division as a select() whose operands differ in width, which OpenCL C refuses.
            wide = dict(e, type="i32", args=[widen(a) for a in e["args"]])
            return self.expr({"k": "cast", "type": e["type"], "saturate": False, "args": [wide]})
        if e["op"] in ("eq", "ne", "lt", "le", "gt", "ge") and x["type"] in ("i8", "u8", "i16"):
            # Likewise compared in int32: TVM's simplifier rewrites `x >= 100` of an int8 x as
            # `1 <= floordiv(x, 100)`, which then meets the printer's select().
            return super().binary(dict(e, args=[widen(a) for a in e["args"]]))
        return super().binary(e)

    def kernel(self, k):
        """The Kernel statement k as a PrimFunc: a Kernel, or None when it has no iterations."""
        launch = k["launch"]
        if launch["kind"] == "single":
            blocks, threads, count = 1, 1, 1
        else:
            extents = [constant(e, "the extent of grid-stride loop %s" % v)
                       for v, e in zip(launch["loops"], launch["extents"])]
            stride = 1
            for v, e in reversed(list(zip(launch["loops"], extents))):
                self.grid_stride[v] = (stride, max(e, 1))
                stride *= max(e, 0)
            count = stride
            threads = launch["threads"]
            blocks = (count + threads - 1) // threads
        if count == 0:
            return None
        self.lines = []
        self.emit(1, 'for ekb_bx in T.thread_binding(T.int64(%d), thread="blockIdx.x"):' % blocks)
        self.emit(2, 'for ekb_tx in T.thread_binding(T.int64(%d), thread="threadIdx.x"):' % threads)
        self.emit(3, "ekb_flat: T.int64 = ekb_bx * T.int64(%d) + ekb_tx" % threads)
        self.emit(3, "if ekb_flat < T.int64(%d):" % count)
        self.stmt(k["body"], 4)
        body = self.lines
        sig = []
        for b in self.func["buffers"]:
            if b["role"] in ("input", "output"):
                n = 1
                for d in b["shape"]:
                    n *= d
                sig.append('%s: T.Buffer((%d,), "%s")' % (self.buf_name(b["name"]), n, BUFFER_DTYPES[b["type"]]))
        for name, (t, n, _) in sorted(self.scratch.items()):
            sig.append('%s: T.Buffer((%d,), "%s")' % (self.buf_name(name), n, BUFFER_DTYPES[t]))
        head = ["# from tvm.script import tirx as T", "@T.prim_func",
                "def %s(%s):" % (self.symbol, ", ".join(sig)),
                '    T.func_attr({"global_symbol": "%s", "tir.noalias": True})' % self.symbol]
        return Kernel(self.symbol, "\n".join(head + body) + "\n", blocks, threads, dict(self.scratch))


def kernels_of(func, symbol, language):
    """The Kernel statements of a gpu-lowered function (in launch order) as Kernels, and the shim
    helpers they call. Nothing runs outside a kernel but the launches themselves."""
    tops = func["body"]["stmts"] if func["body"]["k"] == "block" else [func["body"]]
    out, externs = [], set()
    for i, k in enumerate(tops):
        if k["k"] != "kernel":
            raise TranslationError("a %s statement outside the kernels" % k["k"])
        tr = GpuTranslator(func, "%s_%d" % (symbol, i), language)
        kernel = tr.kernel(k)
        externs |= tr.externs
        if kernel is not None:
            out.append(kernel)
    return out, sorted(externs)
