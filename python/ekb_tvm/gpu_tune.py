"""Candidates for GPU tuning as a batch (docs/TVM.md, "GPU tuning"): K schedules of a workload's
block form (blocks.py) sampled from MetaSchedule's design space for cuda or opencl, WITHOUT
measuring them, each built by TVM to source and wrapped in ekb's ABI as the gpu route wraps its
kernels (gpu_source.py). The GPU machine evaluates them with ekb (no Python, no TVM there) and
keeps the fastest correct one.

What is sampled: the space generator's sketches (MetaSchedule's default rules for the target:
multi-level tiling with shared-memory staging, cross-thread reduction, auto-inline, auto-bind,
unrolling) with their random decisions (tile sizes, cooperative-fetch widths, unroll depths, where
a block is computed) drawn anew for every candidate from a fixed seed, and the postprocessors
applied (thread binding of what is unbound, cooperative fetch, GPU code verification against the
target's limits). A sample a postprocessor rejects is drawn again. Nothing is measured, so there
is no cost model and no evolution: the device's measurement is the search's only selection.
"""

import hashlib
import re

from . import blocks, build, gpu_source
from .translate import GpuTranslator

# The device's limits that MetaSchedule's rules and its GPU code verification read from the
# target: an H100/H200 (sm_90) for cuda; the same limits for opencl, which they fit (NVIDIA's
# OpenCL on the device) and PoCL here exceeds.
TARGET_LIMITS = {"max_shared_memory_per_block": 49152, "max_threads_per_block": 1024, "max_num_threads": 1024,
                 "thread_warp_size": 32}
# Attempts per requested candidate before giving up on more: a postprocessor rejects many samples
# of a small workload (too few threads for the rules' lower bound of 32), and duplicates are dropped.
ATTEMPTS_PER_CANDIDATE = 16
# Byte alignment of each temp in the scratch workspace (a cudaMalloc'd base is 256-aligned).
SCRATCH_ALIGN = 256
DTYPE_BYTES = {"bool": 1, "int8": 1, "uint8": 1, "int16": 2, "uint16": 2, "float16": 2, "int32": 4, "uint32": 4,
               "float32": 4, "int64": 8, "uint64": 8, "float64": 8}


class GpuBlockTranslator(blocks.BlockTranslator, GpuTranslator):
    """The block form with the gpu route's expressions (CUDA's or OpenCL's math functions,
    NaN-propagating min/max helpers instead of LLVM intrinsics, constants the printers keep), and
    its tensors declared with their shapes: the loop IR's flat index is split into one index per
    dimension (floordiv/floormod by the strides, which TVM's simplifier folds back to the loop
    variables). Over a flat buffer, the region a block reads is the whole tensor, so staging a
    tile of a GEMM operand in shared memory copied all of it, and the GPU code verification
    rejected every tiled sample."""

    def __init__(self, func, symbol, language):
        super().__init__(func, symbol, language)
        self.shapes = {b["name"]: b["shape"] for b in func["buffers"]
                       if b["role"] in ("input", "output") and len(b["shape"]) > 1}

    def param_shape(self, b):
        if b["name"] not in self.shapes:
            return super().param_shape(b)
        return "(%s,)" % ", ".join(str(d) for d in b["shape"])

    def element(self, buffer, index):
        shape = self.shapes.get(buffer)
        if shape is None:
            return super().element(buffer, index)
        parts, stride = [], 1
        for d in reversed(shape):
            split = "T.floordiv(%s, T.int64(%d))" % (index, stride) if stride > 1 else index
            parts.append(split if stride * d == self.elements(buffer) else "T.floormod(%s, T.int64(%d))" % (split, d))
            stride *= d
        return "%s[%s]" % (self.buf_name(buffer), ", ".join(reversed(parts)))

    def elements(self, buffer):
        n = 1
        for d in self.shapes[buffer]:
            n *= d
        return n

    def expr(self, e):
        if e["k"] == "load" and e["buffer"] in self.shapes:
            text = self.element(e["buffer"], self.expr(e["indices"][0]))
            return "(%s != T.uint8(0))" % text if e["type"] == "bool" else text
        return super().expr(e)


class TunedKernel:
    """One kernel of a scheduled PrimFunc, as gpu_source launches it: TVM's device function, its
    one-dimensional launch, and the temps it takes as buffers {name: (IR type, elements, offset)}."""

    def __init__(self, device_function, blocks_, threads, scratch):
        self.symbol = device_function
        self.device_function = device_function
        self.blocks = blocks_
        self.threads = threads
        self.scratch = scratch


class Rejected(Exception):
    """A sampled schedule ekb cannot launch (the candidate is drawn again)."""


def gpu_target(language):
    import tvm

    spec = dict(TARGET_LIMITS, kind=language, host={"kind": "llvm", "mtriple": "x86_64-pc-linux-gnu"})
    if language == "cuda":
        spec.update(arch="sm_90", registers_per_block=65536)
    return tvm.target.Target(spec)


def block_module(func, language):
    """(the block form as an IRModule, the helpers it calls); raises blocks.NotTunable."""
    import tvm

    tr = GpuBlockTranslator(func, build.SYMBOL, language)
    prim_func = build.parse(tr.script())
    return tvm.IRModule({build.SYMBOL: prim_func.with_attr("global_symbol", build.SYMBOL)}), sorted(tr.externs)


def global_temps(prim_func):
    """{buffer name: (dtype, elements)} of the temps a scheduled PrimFunc keeps in global memory
    (not inlined): they outlive a kernel, so the launcher gives them scratch space."""
    out = {}
    root = prim_func.body.block
    for b in root.alloc_buffers:
        if b.scope() != "global":
            continue
        n = 1
        for d in b.shape:
            n *= int(d)
        out[b.name] = (str(b.dtype), n)
    return out


LAUNCH = re.compile(r'T\.launch_thread\("(\w+)\.(\w)", (?:T\.int(?:32|64)\()?(\d+)')


def kernels_of(lowered, target, prim_func):
    """(the device module's source, [TunedKernel] in launch order, scratch bytes) of a lowered
    module. Raises Rejected for a launch gpu_source cannot write (more than one dimension,
    dynamic shared memory)."""
    import importlib

    import tvm

    # tvm.tirx.build is also the name of a function there: the module by its full name.
    tir_build = importlib.import_module("tvm.tirx.build")
    host_mod, device_mods = tir_build.split_host_device_mods(lowered)
    if len(device_mods) != 1:
        raise Rejected("%d device modules" % len(device_mods))
    (device_target, device_mod), = device_mods.items()
    _, _, finalize_device = tvm.tirx.get_default_tir_pipeline(target)
    device_mod = finalize_device()(device_mod)
    source = tir_build.codegen_build(device_mod, device_target).inspect_source()

    temps = global_temps(prim_func)
    offsets, total = {}, 0
    for name, (dtype, n) in sorted(temps.items()):
        offsets[name] = total
        total += (n * DTYPE_BYTES[dtype] + SCRATCH_ALIGN - 1) // SCRATCH_ALIGN * SCRATCH_ALIGN
    host_text = "\n".join(f.script() for f in host_mod.functions.values())
    kernels = []
    for gv, df in device_mod.functions.items():
        name = gv.name_hint
        params = [str(p) for p in df.attrs.get("tirx.kernel_launch_params", [])]
        if any(p not in ("blockIdx.x", "threadIdx.x") for p in params):
            raise Rejected("kernel %s launches over %s" % (name, ", ".join(params)))
        extents = {"blockIdx": 1, "threadIdx": 1}
        for kind, dim, value in LAUNCH.findall(df.script()):
            if dim != "x" or kind not in extents:
                raise Rejected("kernel %s binds %s.%s" % (name, kind, dim))
            extents[kind] = int(value)
        scratch = {}
        for b in temps:
            short = b[len("b_"):] if b.startswith("b_") else b
            dtype, n = temps[b]
            scratch[short] = (dtype, n, offsets[b])
        position = host_text.find('"%s"' % name)  # the host function calls the kernels in order
        if position < 0:
            raise Rejected("the host function does not launch kernel %s" % name)
        kernels.append((position, TunedKernel(name, extents["blockIdx"], extents["threadIdx"], scratch)))
    kernels.sort(key=lambda pk: pk[0])
    return source, [k for _, k in kernels], total


def scratch_type_bytes(kernels):
    """gpu_source's opencl scratch lines size a temp as elements x ELEMENT_BYTES[IR type]: the
    temps' TVM dtypes as IR types of the same width."""
    width_type = {1: "u8", 2: "i16", 4: "i32", 8: "i64"}
    for k in kernels:
        k.scratch = {n: (width_type[DTYPE_BYTES[d]], c, off) for n, (d, c, off) in k.scratch.items()}


def wrap(req, language, kernels, externs, device_source, scratch_bytes):
    """The candidate as the backend compiles it (gpu_source's wrappers, the tuned kernels)."""
    scratch_type_bytes(kernels)
    func = dict(req["func"], scratch_bytes=scratch_bytes)
    if language == "cuda":
        return gpu_source.cuda_source(func, req["signature"], kernels, externs, device_source)
    return gpu_source.opencl_source(func, kernels, externs, device_source)


def fresh_trace(sketch):
    """The sketch's instructions without their decisions: applied to a schedule, every sampling
    instruction draws anew from that schedule's random state."""
    from tvm.s_tir.schedule import Trace

    trace = sketch.trace.simplified(remove_postproc=True)
    return Trace(trace.insts, {})


def candidates(req, result):
    """result["candidates"]: [{"source", "trace", "trace_hash"}], at most spec["count"], distinct
    sources; result["attempts"], result["rejected"] (why samples were dropped, counted)."""
    import tvm
    from tvm import s_tir
    from tvm.s_tir import meta_schedule as ms

    spec = req["gpu_candidates"]
    language = req["backend"]
    count, seed = int(spec["count"]), int(spec["seed"])
    mod, externs = block_module(spec["func"], language)
    target = gpu_target(language)
    context = ms.TuneContext(mod=mod, target=target, space_generator="post-order-apply", task_name=build.SYMBOL,
                             rand_state=seed, num_threads=1)
    sketches = context.generate_design_space()
    postprocs = context.space_generator.postprocs
    pipeline, _, _ = tvm.tirx.get_default_tir_pipeline(target)
    out, seen, rejected = [], set(), {}
    attempts = 0
    while len(out) < count and attempts < count * ATTEMPTS_PER_CANDIDATE:
        sketch = sketches[attempts % len(sketches)]
        attempts += 1
        sch = s_tir.Schedule(mod, seed=seed * 100003 + attempts)
        why = None
        try:
            fresh_trace(sketch).apply_to_schedule(sch, remove_postproc=True)
            failed = next((p for p in postprocs if not p.apply(sch)), None)
            if failed is not None:
                why = "rejected by %s" % str(failed).split(".")[-1]
            else:
                scheduled = sch.mod[build.SYMBOL]
                lowered = pipeline(tvm.tirx.transform.BindTarget(target)(tvm.IRModule({build.SYMBOL: scheduled})))
                device_source, kernels, scratch_bytes = kernels_of(lowered, target, scheduled)
                source = wrap(req, language, kernels, externs, device_source, scratch_bytes)
        except Rejected as e:
            why = "not launchable: %s" % e
        except Exception as e:  # a sample TVM fails to apply or build: drawn again
            why = "TVM: %s" % ((str(e).strip().splitlines() or [type(e).__name__])[-1][:120])
        if why is None and source in seen:
            why = "duplicate source"
        if why is not None:
            rejected[why] = rejected.get(why, 0) + 1
            continue
        seen.add(source)
        trace = "\n".join(sch.trace.as_python())
        out.append({"source": source, "trace": trace,
                    "trace_hash": hashlib.sha256(trace.encode()).hexdigest()[:16]})
    result["candidates"] = out
    result["attempts"] = attempts
    result["rejected"] = rejected
    result["sketches"] = len(sketches)
