#!/usr/bin/env python3
"""The table of bench/gpu.sh: per workload, the native default lowering, the hand-written schedule
(examples/schedules-cuda) and the vendor library (bench/gpu_vendor.cu), on cuda; and the time
ratio opencl / cuda of the same kernels (the default lowering and the schedule, target <= 1.5x).

Every time is the median with p25-p75 beside it; speedups are ratios of medians over the default;
the roofline fraction is attainable / median, attainable = max(ops / peak FP32, min_bytes /
bandwidth) from `ekb calibrate --backend cuda` and the IR's cost facts (`ekb list --json`), the
formula of src/eval/roofline.h, applied alike to every column.

Usage: gpu_table.py WORK_DIR OUT_JSON
WORK_DIR holds what bench/gpu.sh wrote: list.json, table-plan.txt, calibration.json (optional),
{cuda,opencl}-{sched,native}.json (ekb.results/1, optional), vendor.jsonl (optional).
"""
import json
import os
import sys


def load_json(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def results_by_workload(path):
    doc = load_json(path)
    return {r["workload"]: r for r in doc["results"]} if doc else {}


def gemm_cost(ni, nj, nk):
    """ekb's cost facts of linalg.gemm (src/ir/cost.h's convention): C = 1.2 C_in + sum(1.5 A B)."""
    return {"flops": ni * nj * (3 * nk + 2), "int_ops": 0, "min_bytes": 4 * (2 * ni * nj + ni * nk + nk * nj)}


def main():
    work, out_path = sys.argv[1], sys.argv[2]
    facts = {w["name"]: w for w in load_json(os.path.join(work, "list.json")) or []}
    calibration = load_json(os.path.join(work, "calibration.json"))
    runs = {(b, k): results_by_workload(os.path.join(work, f"{b}-{k}.json"))
            for b in ("cuda", "opencl") for k in ("sched", "native")}
    vendor, vendor_header, copies = {}, None, {}
    if os.path.exists(os.path.join(work, "vendor.jsonl")):
        for line in open(os.path.join(work, "vendor.jsonl")):
            line = line.strip()
            if not line:
                continue
            doc = json.loads(line)
            if "copy_ms" in doc:
                copies[doc["workload"]] = doc
            elif "workload" in doc:
                vendor[doc["workload"]] = doc
            else:
                vendor_header = doc
    plan = [line.split() for line in open(os.path.join(work, "table-plan.txt")) if line.strip()]

    peak = calibration["peak_gflops"]["best"] * 1e9 if calibration else None
    bandwidth = calibration["bandwidth_gbs"]["best"] * 1e9 if calibration else None

    def roofline(cost, median_ms):
        if not (peak and bandwidth and cost and median_ms):
            return None
        attainable = max((cost["flops"] + cost["int_ops"]) / peak, cost["min_bytes"] / bandwidth)
        return attainable / (median_ms * 1e-3)

    def timed(result, key):
        """(stats, error) of result[key] ('time_ms' or 'baseline_ms'), when the result is correct."""
        if not result:
            return None, None
        if not result.get("correct"):
            return None, f"{result.get('error')}: {(result.get('message') or '')[:100]}"
        return result.get(key), None

    rows = []
    for name, kind, spec, _copy_bytes in plan:
        cost = facts.get(name)
        if cost is None and name.startswith("linalg.gemm/"):
            ni, nj, nk = (int(v.split("=")[1]) for v in spec.split(":")[1].split(","))
            cost = gemm_cost(ni, nj, nk)
        row = {"workload": name, "columns": {}, "errors": {}}
        cuda_run, opencl_run = runs.get(("cuda", kind), {}), runs.get(("opencl", kind), {})
        # The default lowering is the baseline of either run; the schedule is the candidate of a sched run.
        sources = {"default": (cuda_run.get(name), "baseline_ms"),
                   "opencl default": (opencl_run.get(name), "baseline_ms")}
        if kind == "sched":
            sources["scheduled"] = (cuda_run.get(name), "time_ms")
            sources["opencl scheduled"] = (opencl_run.get(name), "time_ms")
        for column, (result, key) in sources.items():
            stats, error = timed(result, key)
            if stats:
                row["columns"][column] = stats
            if error and column in ("scheduled", "opencl scheduled", "default"):
                row["errors"][column] = error
        v = vendor.get(name)
        if v and v.get("time_ms"):
            row["columns"]["vendor"] = v["time_ms"]
            row["vendor"] = v.get("vendor")
        elif v and v.get("error"):
            row["errors"]["vendor"] = v["error"][:120]
        base = row["columns"].get("default", {}).get("median")
        for column, stats in row["columns"].items():
            stats["roofline"] = roofline(cost, stats["median"])
            if base and column in ("scheduled", "vendor"):
                stats["speedup"] = base / stats["median"]
        if "scheduled" in row["columns"] and "vendor" in row["columns"]:
            row["scheduled_rate_over_vendor"] = row["columns"]["vendor"]["median"] / row["columns"]["scheduled"]["median"]
        for kernel in ("default", "scheduled"):
            c, o = row["columns"].get(kernel), row["columns"].get("opencl " + kernel)
            if c and o:
                row[f"opencl_over_cuda_{kernel}"] = o["median"] / c["median"]
        copy = copies.get(name)
        if copy:
            # The same-size copy: its rate, and the fraction of it each kernel reaches.
            row["same_size_copy"] = {"ms": copy["copy_ms"], "bytes": copy["copy_bytes"]}
            for kernel in ("scheduled", "opencl scheduled", "default"):
                if kernel in row["columns"]:
                    row["columns"][kernel]["of_same_size_copy"] = (
                        copy["copy_ms"]["median"] * (cost["min_bytes"] / copy["copy_bytes"] if cost else 1)
                        / row["columns"][kernel]["median"])
        if cost and peak and bandwidth:
            memory_time, compute_time = cost["min_bytes"] / bandwidth, (cost["flops"] + cost["int_ops"]) / peak
            row["bound"] = "memory" if memory_time > compute_time else "compute"
        rows.append(row)

    if vendor_header:
        print(f"  vendor: cuBLAS {vendor_header.get('cublas')}, cuDNN {vendor_header.get('cudnn')}"
              + (f" ({vendor_header['cudnn_missing']})" if vendor_header.get("cudnn_missing") else "")
              + (f"; {vendor_header['error']}" if vendor_header.get("error") else ""))
    if not calibration:
        print("  (no calibration: no roofline fractions)")

    def cell(stats):
        return f"{stats['median']:.4f} ({stats['p25']:.4f}-{stats['p75']:.4f})" if stats else "-"

    def speed(stats):
        return f"{stats['speedup']:.2f}x" if stats and "speedup" in stats else "-"

    def pct(x):
        return f"{100 * x:5.1f}%" if x is not None else "-"

    header = (f"  {'workload':<54}{'bound':<8}{'default ms (IQR)':>28}{'scheduled ms (IQR)':>28}{'vendor ms (IQR)':>28}"
              f"{'x sched':>9}{'x vendor':>9}{'roof def':>9}{'roof sch':>9}{'roof ven':>9}{'sch/ven':>8}"
              f"{'opencl sched ms (IQR)':>28}{'roof ocl':>9}{'ocl/cuda def':>13}{'ocl/cuda sch':>13}")
    print(header)
    for r in rows:
        c = r["columns"]
        d, s, v = c.get("default"), c.get("scheduled"), c.get("vendor")
        # The scheduled kernel through OpenCL (the default's where the workload has no schedule).
        o = c.get("opencl scheduled") or c.get("opencl default")
        ratio = lambda k: f"{r[k]:.2f}" if k in r else "-"
        print(f"  {r['workload']:<54}{r.get('bound', '-'):<8}{cell(d):>28}{cell(s):>28}{cell(v):>28}"
              f"{speed(s):>9}{speed(v):>9}"
              f"{pct(d and d.get('roofline')):>9}{pct(s and s.get('roofline')):>9}{pct(v and v.get('roofline')):>9}"
              f"{ratio('scheduled_rate_over_vendor'):>8}{cell(o):>28}{pct(o and o.get('roofline')):>9}"
              f"{ratio('opencl_over_cuda_default'):>13}{ratio('opencl_over_cuda_scheduled'):>13}")
        for column, error in r["errors"].items():
            print(f"      {column}: {error}")
        if r.get("vendor"):
            print(f"      vendor: {r['vendor']}")
        if r.get("same_size_copy"):
            copy = r["same_size_copy"]
            rate = copy["bytes"] / (copy["ms"]["median"] * 1e-3) / 1e9
            fractions = ", ".join(f"{k} {100 * col['of_same_size_copy']:.1f}%" for k, col in c.items() if "of_same_size_copy" in col)
            print(f"      same-size copy: {copy['ms']['median']:.4f} ms, {rate:.0f} GB/s"
                  + (f" ({100 * rate * 1e9 / bandwidth:.1f}% of the calibrated bandwidth)" if bandwidth else "")
                  + (f"; of its rate: {fractions}" if fractions else ""))
    print("  x sched / x vendor: speedup over the default (ratio of medians); roof: fraction of the roofline;")
    print("  sch/ven: the schedule's rate / the vendor's (SGEMM target >= 0.5); opencl sched: the scheduled kernel")
    print("  (the default where there is none) on the OpenCL platform; ocl/cuda: opencl median / cuda median of the")
    print("  same kernel (target <= 1.5). Memory-bound target: roof >= 70% of the calibrated copy bandwidth;")
    print("  same-size copy: a plain copy moving the row's bytes, the rate a kernel of that size can reach.")
    json.dump({"calibration": calibration, "vendor": vendor_header, "rows": rows}, open(out_path, "w"), indent=1)


if __name__ == "__main__":
    main()
