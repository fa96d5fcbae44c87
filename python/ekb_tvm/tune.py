"""MetaSchedule tuning of a block-form PrimFunc (blocks.py) for cpu, with its records kept in a
directory that ekb names by content hash (docs/TVM.md, "Tuning"): a workload is tuned once per
device, bridge and TVM, and every later compile applies the records without tuning again."""

import functools
import hashlib
import os
import shutil
import subprocess
import tempfile
import time

WORKLOAD_FILE = "database_workload.json"
# MetaSchedule's 30 s defaults for building and running one candidate fail every trial on a loaded
# machine (a test run beside ctest -j2 found no valid schedule in 4 trials); a candidate that is slow
# because the machine is busy is still a valid schedule, so the limits only guard against hangs.
BUILD_TIMEOUT_S = 600.0
RUN_TIMEOUT_S = 300.0
RECORD_FILE = "database_tuning_record.json"
# ekb_abi.h (half conversions) for the helpers compiled into each candidate: <source>/include, the
# bridge being <source>/python/ekb_tvm.
ABI_HEADER = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                          "include", "ekb", "ekb_abi.h")


def tuning_target(native):
    """The cpu target of the untuned route plus the core count MetaSchedule's rules need."""
    import tvm

    from . import build

    spec = dict(build.cpu_target(native).export())
    spec = {k: v for k, v in spec.items() if k in ("kind", "mtriple", "mcpu")}
    spec["num-cores"] = os.cpu_count() or 1
    return tvm.target.Target(spec)


def records_hash(records_dir):
    h = hashlib.sha256()
    for name in (WORKLOAD_FILE, RECORD_FILE):
        with open(os.path.join(records_dir, name), "rb") as f:
            h.update(f.read())
    return h.hexdigest()[:16]


def have_records(records_dir):
    return all(os.path.exists(os.path.join(records_dir, n)) for n in (WORKLOAD_FILE, RECORD_FILE))


def has_valid_record(records_dir):
    """Whether any measured candidate ran: MetaSchedule keeps failed ones as records too (with
    no run time, or 1e10 s)."""
    for record in open_database(records_dir).get_all_tuning_records():
        secs = [float(x) for x in (record.run_secs or [])]
        if secs and max(secs) < 1e9:
            return True
    return False


def first_failure(work_dir):
    """The first builder or runner error MetaSchedule logged ("Error in running:" and the
    message on the lines after it), for the note."""
    for root, _, files in os.walk(os.path.join(work_dir, "logs")):
        for name in sorted(files):
            with open(os.path.join(root, name), errors="replace") as f:
                lines = f.read().splitlines()
            for i, line in enumerate(lines):
                if "Error in building" in line or "Error in running" in line:
                    message = " ".join(l.strip() for l in lines[i + 1:i + 4] if l.strip())
                    return ("%s %s" % (line.split("]")[-1].strip(), message))[:240]
    return "no error logged"


def open_database(records_dir):
    from tvm.s_tir import meta_schedule as ms

    return ms.database.JSONDatabase(
        path_workload=os.path.join(records_dir, WORKLOAD_FILE),
        path_tuning_record=os.path.join(records_dir, RECORD_FILE),
        allow_missing=False,
    )


def alloc_in_ranges(arg_ranges, device, args_info, alloc_repeat):
    """MetaSchedule's f_alloc_argument (run in its runner's worker process): every argument with
    a range in `arg_ranges` (one (lo, hi, IR type) per parameter, None for outputs and unranged
    inputs) filled uniformly inside it, the rest at random as MetaSchedule does."""
    import numpy as np
    from tvm.s_tir.meta_schedule.runner.local_runner import default_alloc_argument

    repeated = default_alloc_argument(device, args_info, alloc_repeat)
    rng = np.random.default_rng(0)
    for args in repeated:
        for arg, r in zip(args, arg_ranges):
            if r is None:
                continue
            lo, hi, ir_type = r
            shape, dtype = tuple(arg.shape), str(arg.dtype)
            if ir_type in ("f16", "bf16"):  # uint16 buffers of bit patterns (translate.py)
                values = rng.uniform(lo, hi, size=shape)
                if ir_type == "f16":
                    values = values.astype(np.float16).view(np.uint16)
                else:  # bf16: the top half of the f32 (truncated: stays inside the range's magnitude)
                    values = (values.astype(np.float32).view(np.uint32) >> 16).astype(np.uint16)
            elif dtype.startswith("float"):
                values = rng.uniform(lo, hi, size=shape).astype(dtype)
            else:
                values = rng.integers(int(lo), int(hi), size=shape, endpoint=True).astype(dtype)
            arg.copyfrom(values)
    return repeated


def export_with_helpers(helpers_c, mod):
    """MetaSchedule's f_export (run in its builder's worker process): the candidate's objects as
    MetaSchedule packs them, plus the shim's helpers that the kernel calls (the runner links
    them into one library; without them every trial dies loading it)."""
    from tvm.support.tar import tar

    work = tempfile.mkdtemp(prefix="ekb-tvm-candidate-")
    source, obj = os.path.join(work, "ekb_tvm_helpers.c"), os.path.join(work, "ekb_tvm_helpers.o")
    # The half helpers call ekb_abi.h's conversions (the cpu backend includes it in the shim);
    # without it they compiled as implicit declarations, an undefined ekb_f16_to_f32 that killed
    # every trial of an f16 kernel at its first call ("Subprocess terminated"). A helper that
    # needs anything else now fails the build with the compiler's message instead.
    with open(source, "w") as f:
        f.write('#include <stdint.h>\n#include <string.h>\n#include "%s"\n' % ABI_HEADER + helpers_c)
    try:
        subprocess.run(["cc", "-O2", "-fPIC", "-Werror=implicit-function-declaration", "-c", source, "-o", obj],
                       check=True, capture_output=True, text=True)
    except subprocess.CalledProcessError as e:
        raise RuntimeError("compiling the shim helpers: " + e.stderr) from e
    artifact = os.path.join(work, "candidate." + tar.output_format)
    mod.export_library(artifact, fcompile=tar, addons=[obj])
    return artifact


def argument_ranges(prim_func, input_ranges, buffers):
    """input_ranges ({tensor name: [lo, hi]}, from the request) in the PrimFunc's parameter order,
    each as (lo, hi, the tensor's IR type); `buffers` is the loop IR's buffer list. A parameter is
    named as its buffer (TVM 0.27), which the translation prefixes (Translator.buf_name): matched by
    tensor name, no range ever applied and a gather's random indices crashed every trial."""
    from .translate import Translator

    by_param = {Translator.buf_name(b["name"]): (input_ranges[b["name"]], b["type"])
                for b in buffers if b["name"] in input_ranges}
    out = []
    for p in prim_func.params:
        r = by_param.get(p.name)
        out.append(None if r is None else (r[0][0], r[0][1], r[1]))
    return out


def tune(prim_func, target, records_dir, trials, input_ranges=None, externs=(), buffers=()):
    """MetaSchedule's search with `trials` measured candidates; its database published as
    records_dir (written beside it and renamed, so a reader sees all of it or none). Inputs are
    measured with values inside input_ranges ({tensor name: [lo, hi]}); the shim helpers named
    by `externs` are linked into every candidate."""
    from tvm.s_tir import meta_schedule as ms

    from . import shim

    alloc = functools.partial(alloc_in_ranges, argument_ranges(prim_func, input_ranges or {}, buffers))
    export = functools.partial(export_with_helpers, shim.helpers_source(externs)) if externs else None

    parent = os.path.dirname(records_dir)
    os.makedirs(parent, exist_ok=True)
    work = tempfile.mkdtemp(prefix=".tuning-", dir=parent)
    try:
        ms.tune_tir(
            prim_func,
            target,
            work_dir=work,
            max_trials_global=trials,
            num_trials_per_iter=min(trials, 64),
            num_tuning_cores="logical",
            builder=ms.builder.LocalBuilder(timeout_sec=BUILD_TIMEOUT_S, f_export=export),
            runner=ms.runner.LocalRunner(timeout_sec=RUN_TIMEOUT_S, f_alloc_argument=alloc),
            seed=0,
        )
        if not have_records(work):
            raise RuntimeError("MetaSchedule wrote no database")
        if not has_valid_record(work):
            # Not published: failed measurements kept as records would be applied (as nothing)
            # on every later compile instead of tuning again.
            raise RuntimeError("no valid schedule in %d trials (%s)" % (trials, first_failure(work)))
        try:
            os.rename(work, records_dir)
            work = None
        except OSError:
            if not have_records(records_dir):  # not another process's records: a real failure
                raise
    finally:
        if work:
            shutil.rmtree(work, ignore_errors=True)


def tuned_func(prim_func, native, records_dir, trials, input_ranges=None, externs=(), buffers=()):
    """(the scheduled PrimFunc or None, a report for the result). Tunes only when records_dir has
    no records yet."""
    from tvm.s_tir import meta_schedule as ms

    target = tuning_target(native)
    report = {"trials": trials, "tuned_now": False, "tuning_s": 0.0}
    if not have_records(records_dir):
        start = time.time()
        tune(prim_func, target, records_dir, trials, input_ranges, externs, buffers)
        report["tuned_now"] = True
        report["tuning_s"] = time.time() - start
    report["records"] = records_hash(records_dir)
    database = open_database(records_dir)
    schedule = ms.tir_integration.compile_tir(database, prim_func, target)
    if schedule is None:
        return None, report
    return schedule.mod["main"], report
