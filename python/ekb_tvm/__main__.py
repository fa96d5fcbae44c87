"""The TVM bridge, run by ekb as a subprocess (src/tvm/tvm_compiler.cpp, src/tvm/bridge_server.cpp):

    python -m ekb_tvm compile REQUEST.json RESULT.json
    python -m ekb_tvm serve      (one request per line on stdin: "REQUEST.json<TAB>RESULT.json";
                                  "done" on stdout once RESULT is written)

`serve` is what ekb runs: importing tvm costs about 1.5 s of CPU, more than most compiles, so one
process answers every request of an ekb run (a compile is a pure function of its request, so a
reused process gives the result a fresh one would).

REQUEST: {"backend": "cpu" | "cuda" | "opencl", "native": false, "signature": "void ekb_main(...)",
          "func": <loop IR JSON>,
          "tune": {"trials": N, "records_dir": DIR, "not_tunable": WHY, "device": CPU,
                   "input_ranges": {input: [lo, hi]} (declared domains, for MetaSchedule's runner),
                   "func": <the loop IR without loop partitioning, for the block form>}   (cpu, tvm-tuned only),
          "gpu_candidates": {"count": K, "seed": S, "func": <as tune's>}
                   (cuda/opencl: sampled schedules instead of a compile, gpu_tune.py)}
RESULT:  {"ok": true, "tvmscript": ..., "asm": ..., "source": <what the backend compiles>, "tvm_version": ...,
          "tuning": {"tuned": bool, "note": WHY NOT, "trials": N, "records": HASH, "tuned_now": bool,
                     "tuning_s": seconds}   (with "tune" only),
          "candidates": [{"source", "trace", "trace_hash"}], "note": WHY NONE, "attempts": N,
          "rejected": {why: count}, "sketches": N   (with "gpu_candidates" only)}
      or {"ok": false, "stage": "translate" | "parse" | "tune" | "build", "message": <TVM's message>}
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
        if "gpu_candidates" in req:
            return gpu_candidates(req, result)
        if backend in ("cuda", "opencl"):
            return compile_gpu(req, backend, result)
        import tvm

        result["tvm_version"] = tvm.__version__
        prim_func, externs = None, []
        if "tune" in req:
            stage = "tune"
            prim_func, externs = tuned_cpu(req, result)
        if prim_func is None:
            stage = "translate"
            script, externs = translate.to_tvmscript(req["func"], build.SYMBOL)
            result["tvmscript"] = script
            stage = "parse"
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


def tuned_cpu(req, result):
    """(MetaSchedule's schedule of the block-form translation, the shim helpers it calls), or
    (None, []) where there is none: result["tuning"] says why, and the untuned translation is
    built instead."""
    from . import blocks, build, tune

    spec = req["tune"]
    tuning = result["tuning"] = {"tuned": False, "note": "", "trials": spec["trials"]}
    if spec.get("not_tunable"):
        tuning["note"] = spec["not_tunable"]
        return None, []
    try:
        script, externs = blocks.to_block_tvmscript(spec["func"], build.SYMBOL)
    except blocks.NotTunable as e:
        tuning["note"] = "no block form: %s" % e
        return None, []
    prim_func = build.parse(script)
    try:
        scheduled, report = tune.tuned_func(prim_func, bool(req.get("native", False)), spec["records_dir"],
                                            spec["trials"], spec.get("input_ranges"), externs,
                                            spec["func"]["buffers"])
    except Exception as e:  # MetaSchedule's failure is this workload's note, not a failed compile
        tuning["note"] = "MetaSchedule failed: %s" % (str(e).strip().splitlines() or [type(e).__name__])[-1]
        return None, []
    tuning.update(report)
    tuning["note"] = report.get("check", "")
    if scheduled is None:
        tuning["note"] = "MetaSchedule found no valid schedule in %d trials" % spec["trials"]
        return None, []
    tuning["tuned"] = True
    result["tvmscript"] = scheduled.script()
    return scheduled, externs


def gpu_candidates(req, result):
    """cuda / opencl: MetaSchedule's sampled schedules of the block form as sources (gpu_tune.py).
    A workload without a block form has none: result["note"] says why (ok all the same; ekb does
    not ask for a workload that is not all pure definitions)."""
    from . import blocks, gpu_tune

    import tvm

    result["tvm_version"] = tvm.__version__
    result["candidates"] = []
    result["stage"] = "tune"
    try:
        gpu_tune.candidates(req, result)
    except blocks.NotTunable as e:
        result["note"] = "no block form: %s" % e
    del result["stage"]
    result["ok"] = True
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


def answer(request_path, result_path):
    with open(request_path) as f:
        req = json.load(f)
    result = compile_request(req)
    with open(result_path, "w") as f:
        json.dump(result, f)


def exit_with_parent():
    """An ekb that is killed leaves its bridge mid-request (a MetaSchedule search runs for
    minutes): when the parent is gone, end the bridge's process group, which ekb made it lead
    (src/tvm/bridge_server.cpp), MetaSchedule's workers with it. Started by hand outside its own
    group, it ends only itself."""
    import os
    import signal
    import threading
    import time

    parent = os.getppid()

    def watch():
        while os.getppid() == parent:
            time.sleep(1)
        if os.getpgrp() == os.getpid():
            os.killpg(0, signal.SIGKILL)
        os._exit(1)

    threading.Thread(target=watch, daemon=True).start()


def serve():
    """Requests from stdin until it closes. The protocol keeps a private copy of stdout: whatever
    TVM or MetaSchedule prints goes to stderr (ekb's log of this process), never into a reply."""
    import os

    exit_with_parent()
    replies = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    for line in sys.stdin:
        request_path, result_path = line.rstrip("\n").split("\t")
        answer(request_path, result_path)
        replies.write("done\n")
        replies.flush()
    return 0


def main(argv):
    if len(argv) == 2 and argv[1] == "serve":
        return serve()
    if len(argv) != 4 or argv[1] != "compile":
        print("usage: python -m ekb_tvm compile REQUEST.json RESULT.json | serve", file=sys.stderr)
        return 2
    answer(argv[2], argv[3])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
