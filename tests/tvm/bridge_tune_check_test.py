"""The bridge's check of MetaSchedule's best records (python/ekb_tvm/tune.py, docs/TVM.md "Not caught
by the search"): a fastest record that computes something else is dropped from the database and the
next one is used. The records are TVM's own schedules of a small reduction, drawn from MetaSchedule's design space
and given measured times without measuring (the search itself is tested through ekb in
tvm_baseline_test.cpp); the wrong result of the fastest one is injected where TVM's bug would
produce it, in its run, since no schedule of a correct TVM computes wrongly on purpose."""

import json
import os
import shutil
import tempfile
import unittest

import numpy as np
import tvm
from tvm.script import tirx as T

from tvm import s_tir
from tvm.s_tir import meta_schedule as ms

from ekb_tvm import gpu_tune, tune


@T.prim_func(s_tir=True)
def row_sums(a: T.Buffer((16, 64), "float32"), s: T.Buffer((16,), "float32")):
    for i, k in T.grid(16, 64):
        with T.sblock("sum"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                s[vi] = T.float32(0)
            s[vi] = s[vi] + a[vi, vk]


class Mismatch(unittest.TestCase):
    def test_reassociated_float_sums_agree_and_a_doubled_sum_does_not(self):
        want = [np.linspace(-3, 3, 64, dtype=np.float32)]
        self.assertIsNone(tune.mismatch([want[0] * (1 + 1e-6)], want, ["f32"]))
        why = tune.mismatch([want[0] * 2], want, ["f32"])
        self.assertIn("argument 0", why)

    def test_halves_compare_as_numbers_not_bit_patterns(self):
        want = np.array([1.0, 2.0, 3.0], dtype=np.float16).view(np.uint16)
        near = np.array([1.0, 2.001, 3.0], dtype=np.float16).view(np.uint16)  # one ulp of 2.0 apart
        self.assertIsNone(tune.mismatch([near], [want], ["f16"]))
        self.assertIsNotNone(tune.mismatch([want + 1024], [want], ["f16"]))

    def test_integers_may_round_one_step_apart_and_no_more(self):
        want = np.array([10, -5, 7], dtype=np.int8)
        self.assertIsNone(tune.mismatch([want + np.array([1, 0, -1], dtype=np.int8)], [want], ["i8"]))
        self.assertIsNotNone(tune.mismatch([want + 2], [want], ["i8"]))

    def test_nans_where_the_unscheduled_function_has_them_agree(self):
        want = np.array([np.nan, 1.0], dtype=np.float32)
        self.assertIsNone(tune.mismatch([want.copy()], [want], ["f32"]))
        self.assertIsNotNone(tune.mismatch([np.array([0.0, 1.0], dtype=np.float32)], [want], ["f32"]))


class DropWrongRecords(unittest.TestCase):
    RECORDS = 4

    @classmethod
    def setUpClass(cls):
        """A database of RECORDS schedules of row_sums, the first drawn the fastest."""
        cls.root = tempfile.mkdtemp(prefix="ekb-tune-check-")
        cls.target = tvm.target.Target({"kind": "llvm", "num-cores": 2})
        cls.records = os.path.join(cls.root, "records")
        os.makedirs(cls.records)
        database = ms.database.JSONDatabase(
            path_workload=os.path.join(cls.records, tune.WORKLOAD_FILE),
            path_tuning_record=os.path.join(cls.records, tune.RECORD_FILE), allow_missing=True)
        mod = ms.tune_context._normalize_mod(row_sums)  # the workload as tune_tir commits it
        workload = database.commit_workload(mod)
        context = ms.TuneContext(mod=mod, target=cls.target, space_generator="post-order-apply", task_name="main",
                                 rand_state=0, num_threads=1)
        sketches = context.generate_design_space()
        for n in range(cls.RECORDS):
            schedule = s_tir.Schedule(mod, seed=n + 1)
            gpu_tune.fresh_trace(sketches[n % len(sketches)]).apply_to_schedule(schedule, remove_postproc=True)
            for postproc in context.space_generator.postprocs:
                assert postproc.apply(schedule), str(postproc)
            database.commit_tuning_record(ms.database.TuningRecord(
                trace=schedule.trace, workload=workload, run_secs=[1e-6 * (n + 1)], target=cls.target,
                args_info=ms.arg_info.ArgInfo.from_prim_func(row_sums)))

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.root, ignore_errors=True)

    def setUp(self):
        self.work = tempfile.mkdtemp(dir=self.root)
        for name in (tune.WORKLOAD_FILE, tune.RECORD_FILE):
            shutil.copy(os.path.join(self.records, name), self.work)
        self.scratch = tempfile.mkdtemp(dir=self.root)
        self.types = ["f32", "f32"]
        self.args = tune.check_arguments(row_sums, [(-1.0, 1.0, "f32"), None], self.types)
        self.real_run = tune.run_module

    def tearDown(self):
        tune.run_module = self.real_run

    def timed_lines(self):
        with open(os.path.join(self.work, tune.RECORD_FILE)) as f:
            return [l for l in f.read().splitlines() if l.strip() and min(json.loads(l)[1][1] or [1e10]) < 1e9]

    def test_the_records_tuned_here_agree_with_the_unscheduled_function(self):
        before = self.timed_lines()
        self.assertEqual(len(before), self.RECORDS)
        self.assertEqual(tune.drop_wrong_records(self.target, self.work, self.args, self.types, "", self.scratch), "")
        self.assertEqual(self.timed_lines(), before)

    def test_a_fastest_record_that_computes_wrongly_is_dropped_and_the_next_is_used(self):
        before = self.timed_lines()
        fastest = min(before, key=lambda l: sum(json.loads(l)[1][1]))

        def run_with_the_fastest_wrong(mod, target, helpers_obj, args, path):
            out = self.real_run(mod, target, helpers_obj, args, path)
            if os.path.basename(path) == "record-0.so":  # the fastest record: sums doubled
                out[1] = out[1] * 2
            return out

        tune.run_module = run_with_the_fastest_wrong
        note = tune.drop_wrong_records(self.target, self.work, self.args, self.types, "", self.scratch)
        self.assertIn("1 of the fastest schedules computed wrong results", note)
        after = self.timed_lines()
        self.assertEqual(len(after), len(before) - 1)
        self.assertNotIn(fastest, after)
        # What compile_tir now applies is a record that agrees.
        from tvm.s_tir import meta_schedule as ms

        schedule = ms.tir_integration.compile_tir(tune.open_database(self.work), row_sums, self.target)
        self.assertIsNotNone(schedule)

    def test_where_every_record_computes_wrongly_tuning_fails_and_says_so(self):
        def run_all_wrong(mod, target, helpers_obj, args, path):
            out = self.real_run(mod, target, helpers_obj, args, path)
            if os.path.basename(path).startswith("record-"):
                out[1] = out[1] + 1
            return out

        tune.run_module = run_all_wrong
        with self.assertRaisesRegex(RuntimeError, "computes what the unscheduled function does"):
            tune.drop_wrong_records(self.target, self.work, self.args, self.types, "", self.scratch)


if __name__ == "__main__":
    unittest.main()
