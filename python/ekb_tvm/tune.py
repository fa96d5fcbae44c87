"""MetaSchedule tuning of a block-form PrimFunc (blocks.py) for cpu, with its records kept in a
directory that ekb names by content hash (docs/TVM.md, "Tuning"): a workload is tuned once per
device, bridge and TVM, and every later compile applies the records without tuning again."""

import hashlib
import os
import shutil
import tempfile
import time

WORKLOAD_FILE = "database_workload.json"
# MetaSchedule's 30 s defaults for building and running one candidate fail every trial on a loaded
# machine (a test run beside ctest -j2 found no valid schedule in 4 trials); a candidate that is slow
# because the machine is busy is still a valid schedule, so the limits only guard against hangs.
BUILD_TIMEOUT_S = 600.0
RUN_TIMEOUT_S = 300.0
RECORD_FILE = "database_tuning_record.json"


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


def tune(prim_func, target, records_dir, trials):
    """MetaSchedule's search with `trials` measured candidates; its database published as
    records_dir (written beside it and renamed, so a reader sees all of it or none)."""
    from tvm.s_tir import meta_schedule as ms

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
            builder=ms.builder.LocalBuilder(timeout_sec=BUILD_TIMEOUT_S),
            runner=ms.runner.LocalRunner(timeout_sec=RUN_TIMEOUT_S),
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


def tuned_func(prim_func, native, records_dir, trials):
    """(the scheduled PrimFunc or None, a report for the result). Tunes only when records_dir has
    no records yet."""
    from tvm.s_tir import meta_schedule as ms

    target = tuning_target(native)
    report = {"trials": trials, "tuned_now": False, "tuning_s": 0.0}
    if not have_records(records_dir):
        start = time.time()
        tune(prim_func, target, records_dir, trials)
        report["tuned_now"] = True
        report["tuning_s"] = time.time() - start
    report["records"] = records_hash(records_dir)
    database = open_database(records_dir)
    schedule = ms.tir_integration.compile_tir(database, prim_func, target)
    if schedule is None:
        return None, report
    return schedule.mod["main"], report
