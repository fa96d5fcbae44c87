"""The TVM bridge, run by ekb as a subprocess (src/tvm/tvm_compiler.cpp):

    python -m ekb_tvm compile REQUEST.json RESULT.json

REQUEST: {"backend": "cpu" | "cuda" | "opencl", "native": false, "signature": "void ekb_main(...)",
          "func": <loop IR JSON>}
RESULT:  {"ok": true, "tvmscript": ..., "asm": ..., "source": <what the backend compiles>, "tvm_version": ...}
      or {"ok": false, "stage": "translate" | "parse" | "build", "message": <TVM's message>}
Exit status 0 whenever RESULT was written; a failure to compile is a result, not a crash.
"""

import json
import sys
import traceback


def compile_request(req):
    from . import build, shim, translate

    result = {"ok": False}
    stage = "translate"
    try:
        backend = req.get("backend", "cpu")
        if backend in ("cuda", "opencl"):
            return compile_gpu(req, backend, result)
        script, externs = translate.to_tvmscript(req["func"], build.SYMBOL)
        result["tvmscript"] = script
        stage = "parse"
        import tvm

        result["tvm_version"] = tvm.__version__
        prim_func = build.parse(script)
        stage = "build"
        asm, symbol = build.build_cpu(prim_func, native=bool(req.get("native", False)))
        result["asm"] = asm
        result["source"] = shim.shim_source(req["func"], req["signature"], symbol, externs, asm)
        result["ok"] = True
    except Exception as e:  # TVM raises many types; every one is this kernel's compile error
        stage = result.get("stage", stage)  # the gpu route keeps its stage in the result
        result["stage"] = stage
        msg = str(e).strip() or type(e).__name__
        result["message"] = "%s: %s" % (stage, msg)
        result["traceback"] = traceback.format_exc()
    return result


def compile_gpu(req, backend, result):
    """cuda / opencl: each kernel of the native gpu lowering translated and built by TVM, its
    source wrapped for the backend (gpu_source.py). Raises with result["stage"] set."""
    from . import build, gpu_source, translate

    result["stage"] = "translate"
    kernels, externs = translate.kernels_of(req["func"], build.SYMBOL, backend)
    result["tvmscript"] = "\n".join(k.script for k in kernels)
    import tvm

    result["tvm_version"] = tvm.__version__
    result["stage"] = "build"
    device_source = build.build_gpu(kernels, backend) if kernels else ""
    result["device_source"] = device_source
    if backend == "cuda":
        result["source"] = gpu_source.cuda_source(req["func"], req["signature"], kernels, externs, device_source)
    else:
        result["source"] = gpu_source.opencl_source(req["func"], kernels, externs, device_source)
    result["ok"] = True
    del result["stage"]
    return result


def main(argv):
    if len(argv) != 4 or argv[1] != "compile":
        print("usage: python -m ekb_tvm compile REQUEST.json RESULT.json", file=sys.stderr)
        return 2
    with open(argv[2]) as f:
        req = json.load(f)
    result = compile_request(req)
    with open(argv[3], "w") as f:
        json.dump(result, f)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
