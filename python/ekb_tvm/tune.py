"""MetaSchedule tuning of a block-form PrimFunc (blocks.py) for cpu, with its records kept in a
directory that ekb names by content hash (docs/TVM.md, "Tuning"): a workload is tuned once per
device, bridge and TVM, and every later compile applies the records without tuning again."""

import hashlib
import os
import shutil
import tempfile
import time

WORKLOAD_FILE = "database_workload.json"
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
            seed=0,
        )
        if not have_records(work):
            raise RuntimeError("MetaSchedule wrote no database")
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
    database = ms.database.JSONDatabase(
        path_workload=os.path.join(records_dir, WORKLOAD_FILE),
        path_tuning_record=os.path.join(records_dir, RECORD_FILE),
        allow_missing=False,
    )
    schedule = ms.tir_integration.compile_tir(database, prim_func, target)
    if schedule is None:
        return None, report
    return schedule.mod["main"], report
