"""Building a translated PrimFunc with TVM for a backend (docs/TVM.md)."""

import re

SYMBOL = "ekb_tvm_main"


def cpu_target(native=False):
    """TVM 0.27 refuses target strings such as "llvm -mcpu=native": targets are dicts."""
    import tvm

    spec = {"kind": "llvm", "mtriple": "x86_64-pc-linux-gnu"}
    if native:
        spec["mcpu"] = tvm.target.codegen.llvm_get_system_cpu() if hasattr(tvm.target, "codegen") else "native"
    return tvm.target.Target(spec)


def parse(script):
    from tvm.script.parser import parse as parse_script

    return parse_script(script)


def packed_symbol(asm):
    """The packed function TVM exported for SYMBOL: its name in the assembly's .globl lines."""
    globals_ = re.findall(r"^\s*\.globl\s+(\S+)", asm, re.M)
    for name in globals_:
        if name.endswith(SYMBOL) and name != SYMBOL:
            return name
    if SYMBOL in globals_:
        return SYMBOL
    raise RuntimeError("TVM's assembly exports no function for %s (globals: %s)" % (SYMBOL, ", ".join(globals_)))


def build_cpu(prim_func, native=False):
    """TVM's LLVM output for the function: (assembly text, the packed function's symbol)."""
    import tvm

    mod = tvm.IRModule({SYMBOL: prim_func.with_attr("global_symbol", SYMBOL)})
    lib = tvm.compile(mod, target=cpu_target(native))
    lib = getattr(lib, "mod", lib)  # 0.27's tvm.compile returns an Executable around the module
    asm = lib.inspect_source("asm")
    return asm, packed_symbol(asm)


def gpu_target(language):
    """cuda or opencl (TVM prints their source without a device), with an LLVM host for the
    launching code, which ekb replaces by its own (gpu_source.py)."""
    import tvm

    return tvm.target.Target({"kind": language, "host": {"kind": "llvm", "mtriple": "x86_64-pc-linux-gnu"}})


def build_gpu(kernels, language):
    """TVM's device source for the kernels (translate.Kernel), one PrimFunc each, in one module."""
    import tvm

    mod = tvm.IRModule({k.symbol: parse(k.script).with_attr("global_symbol", k.symbol) for k in kernels})
    lib = tvm.compile(mod, target=gpu_target(language))
    lib = getattr(lib, "mod", lib)
    device = [m for m in lib.imports if m.kind in ("cuda", "opencl")] if hasattr(lib, "imports") else []
    if not device:
        raise RuntimeError("TVM built no %s module" % language)
    return device[0].inspect_source()
