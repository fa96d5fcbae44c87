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
            if r is not None:
                arg.copyfrom(values_in_range(rng, r, tuple(arg.shape), str(arg.dtype)))
    return repeated


def values_in_range(rng, value_range, shape, dtype):
    """A numpy array of `shape` and `dtype` filled uniformly inside value_range ((lo, hi, IR type))."""
    import numpy as np

    lo, hi, ir_type = value_range
    if ir_type in ("f16", "bf16"):  # uint16 buffers of bit patterns (translate.py)
        values = rng.uniform(lo, hi, size=shape)
        if ir_type == "f16":
            return values.astype(np.float16).view(np.uint16)
        # bf16: the top half of the f32 (truncated: stays inside the range's magnitude)
        return (values.astype(np.float32).view(np.uint32) >> 16).astype(np.uint16)
    if dtype.startswith("float"):
        return rng.uniform(lo, hi, size=shape).astype(dtype)
    return rng.integers(int(lo), int(hi), size=shape, endpoint=True).astype(dtype)


def compile_helpers(helpers_c, work):
    """The shim's helpers (shim.helpers_source) compiled to an object in `work`, for linking into a
    TVM library."""
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
    return obj


def export_with_helpers(helpers_c, scratch, mod):
    """MetaSchedule's f_export (run in its builder's worker process): the candidate's objects as
    MetaSchedule packs them, plus the shim's helpers that the kernel calls (the runner links
    them into one library; without them every trial dies loading it). Written under `scratch`,
    which tune() removes when the search ends (MetaSchedule's own export leaves its in /tmp)."""
    from tvm.support.tar import tar

    work = tempfile.mkdtemp(prefix="candidate-", dir=scratch)
    artifact = os.path.join(work, "candidate." + tar.output_format)
    mod.export_library(artifact, fcompile=tar, addons=[compile_helpers(helpers_c, work)])
    return artifact


def parameter_types(prim_func, buffers):
    """The IR type of each of the PrimFunc's parameters (None where no buffer of the loop IR's list
    `buffers` matches). A parameter is named as its buffer (TVM 0.27), which the translation
    prefixes (Translator.buf_name)."""
    from .translate import Translator

    by_param = {Translator.buf_name(b["name"]): b for b in buffers}
    return [by_param[p.name]["type"] if p.name in by_param else None for p in prim_func.params]


def argument_ranges(prim_func, input_ranges, buffers):
    """input_ranges ({tensor name: [lo, hi]}, from the request) in the PrimFunc's parameter order,
    each as (lo, hi, the tensor's IR type), None for the parameters without one. Matched by the
    parameter's name: matched by tensor name, no range was ever applied and a gather's random
    indices crashed every trial."""
    from .translate import Translator

    by_param = {Translator.buf_name(name): r for name, r in input_ranges.items()}
    return [None if p.name not in by_param else (by_param[p.name][0], by_param[p.name][1], t)
            for p, t in zip(prim_func.params, parameter_types(prim_func, buffers))]


# MetaSchedule measures candidates and never checks them, so a schedule that TVM lowers wrongly can
# win (docs/TVM.md, "Not caught by the search"). The best records are run against the unscheduled
# function on the same inputs, and those that disagree are dropped until the best one agrees.
CHECKED_RECORDS = 8
CHECK_FILE = "ekb_check.txt"  # what the check dropped, beside the records ("" where nothing)
# Differences allowed: reassociated float sums differ in their last bits, a wrong schedule by far
# more; an integer result may round one step apart where a float intermediate is contracted.
FLOAT_TOLERANCE = {"f16": 1e-2, "bf16": 2e-2}
DEFAULT_FLOAT_TOLERANCE = 1e-3


def check_arguments(prim_func, arg_ranges, types):
    """Arguments for the check in parameter order (numpy): inputs inside their ranges, the rest
    (outputs, which some kernels also read) at small random values."""
    import numpy as np

    rng = np.random.default_rng(1)
    args = []
    for p, r, t in zip(prim_func.params, arg_ranges, types):
        shape, dtype = tuple(int(x) for x in p.shape), str(p.dtype)  # 0.27: parameters are buffers
        if r is None:
            r = (-1.0, 1.0, t) if t in ("f16", "bf16") or dtype.startswith("float") else (0, 3, t)
        args.append(values_in_range(rng, r, shape, dtype))
    return args


def as_float(values, ir_type):
    """Values of an argument as float64 numbers (f16 and bf16 are stored as uint16 bit patterns)."""
    import numpy as np

    if ir_type == "f16":
        return values.view(np.float16).astype(np.float64)
    if ir_type == "bf16":
        return (values.astype(np.uint32) << 16).view(np.float32).astype(np.float64)
    return values.astype(np.float64)


def mismatch(got, want, types):
    """None where every argument agrees, else a description of the first that does not."""
    import numpy as np

    for i, (g, w, t) in enumerate(zip(got, want, types)):
        if t in ("f16", "bf16") or w.dtype.kind == "f":
            g, w = as_float(g, t), as_float(w, t)
            finite = np.abs(w[np.isfinite(w)])
            scale = max(1.0, float(finite.max())) if finite.size else 1.0
            tol = FLOAT_TOLERANCE.get(t, DEFAULT_FLOAT_TOLERANCE)
            ok = (np.isnan(g) & np.isnan(w)) | (g == w) | (np.abs(g - w) <= tol * (np.abs(w) + scale))
        else:
            ok = np.abs(g.astype(np.int64) - w.astype(np.int64)) <= 1
        if not ok.all():
            bad = np.flatnonzero(~ok.ravel())
            j = int(bad[0])
            return "argument %d: %d of %d elements differ (first at %d: %r, unscheduled %r)" % (
                i, bad.size, ok.size, j, g.ravel()[j].item(), w.ravel()[j].item())
    return None


def run_module(mod, target, helpers_obj, args, path):
    """The arguments after one call of mod's "main", built for target (linked with the shim's
    helpers where the kernel calls them) as a library at `path`."""
    import tvm

    lib = tvm.compile(mod, target=target)
    lib.export_library(path, addons=[helpers_obj] if helpers_obj else None)
    device = tvm.cpu()
    arrays = [tvm.runtime.tensor(a, device) for a in args]
    tvm.runtime.load_module(path)["main"](*arrays)
    return [a.numpy() for a in arrays]


def drop_wrong_records(target, work, args, types, helpers_c, scratch):
    """Checks the best records of the database in `work` in order of their measured time against
    the unscheduled function, removing from it those that compute something else, until one agrees.
    Returns a note ("" where the best agreed); raises where none of CHECKED_RECORDS does."""
    import json

    import tvm
    from tvm.s_tir import meta_schedule as ms

    with open(os.path.join(work, WORKLOAD_FILE)) as f:
        workload = ms.database.Workload.from_json(json.loads(f.readline()))
    records_path = os.path.join(work, RECORD_FILE)
    with open(records_path) as f:
        lines = [l for l in f.read().splitlines() if l.strip()]

    def mean_secs(line):
        secs = [float(x) for x in (json.loads(line)[1][1] or [])]
        return sum(secs) / len(secs) if secs and max(secs) < 1e9 else None

    timed = sorted((s, i) for i, s in ((i, mean_secs(l)) for i, l in enumerate(lines)) if s is not None)
    helpers_obj = compile_helpers(helpers_c, scratch) if helpers_c else None
    want = run_module(workload.mod, target, helpers_obj, args, os.path.join(scratch, "unscheduled.so"))
    wrong = []
    for n, (_, i) in enumerate(timed[:CHECKED_RECORDS]):
        record = ms.database.TuningRecord.from_json(json.loads(lines[i])[1], workload)
        schedule = tvm.s_tir.Schedule(workload.mod)
        record.trace.apply_to_schedule(schedule, remove_postproc=False)
        why = mismatch(run_module(schedule.mod, target, helpers_obj, args,
                                  os.path.join(scratch, "record-%d.so" % n)), want, types)
        if why is None:
            break
        wrong.append((i, why))
    else:
        raise RuntimeError("none of the %d fastest schedules computes what the unscheduled function does (%s)"
                           % (len(wrong), wrong[0][1] if wrong else "no timed record"))
    if not wrong:
        return ""
    dropped = {i for i, _ in wrong}
    with open(records_path, "w") as f:
        f.write("".join(l + "\n" for i, l in enumerate(lines) if i not in dropped))
    return ("%d of the fastest schedules computed wrong results and were dropped (the first: %s)"
            % (len(wrong), wrong[0][1]))


def tune(prim_func, target, records_dir, trials, input_ranges=None, externs=(), buffers=()):
    """MetaSchedule's search with `trials` measured candidates; its database published as
    records_dir (written beside it and renamed, so a reader sees all of it or none). Inputs are
    measured with values inside input_ranges ({tensor name: [lo, hi]}); the shim helpers named
    by `externs` are linked into every candidate."""
    from tvm.s_tir import meta_schedule as ms

    from . import shim

    ranges = argument_ranges(prim_func, input_ranges or {}, buffers)
    helpers_c = shim.helpers_source(externs) if externs else ""
    parent = os.path.dirname(records_dir)
    os.makedirs(parent, exist_ok=True)
    scratch = tempfile.mkdtemp(prefix=".scratch-", dir=parent)
    alloc = functools.partial(alloc_in_ranges, ranges)
    export = functools.partial(export_with_helpers, helpers_c, scratch) if externs else None
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
        types = parameter_types(prim_func, buffers)
        note = drop_wrong_records(target, work, check_arguments(prim_func, ranges, types), types, helpers_c, scratch)
        with open(os.path.join(work, CHECK_FILE), "w") as f:
            f.write(note)
        try:
            os.rename(work, records_dir)
            work = None
        except OSError:
            if not have_records(records_dir):  # not another process's records: a real failure
                raise
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
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
    check = os.path.join(records_dir, CHECK_FILE)
    if os.path.exists(check):
        with open(check) as f:
            report["check"] = f.read()
    database = open_database(records_dir)
    schedule = ms.tir_integration.compile_tir(database, prim_func, target)
    if schedule is None:
        return None, report
    return schedule.mod["main"], report
