#!/usr/bin/env bash
# The hand-written CPU schedules (examples/schedules-cpu) against the default lowering and, where
# one exists, a vendor library (issue #4's performance table). One row per workload, four columns:
#  - default:   the native compiler's default lowering (single-threaded plain loops), the baseline
#               `ekb eval` measures every candidate against;
#  - scheduled: the IR solution with its schedule layer, evaluated by `ekb eval -s examples/schedules-cpu`;
#  - vendor:    OpenBLAS (gemm: cblas_sgemm; pwconv: one sgemm; conv2d: im2col + sgemm; fc: one
#               sgemm; gemv_decode: cblas_sgemv), timed by build/ekb_cpu_vendor (bench/cpu_vendor.cpp);
#  - copy:      for memory-bound rows, a same-size copy (the row's input bytes read, its output bytes
#               written with streaming stores, all cores), compiled by the cpu backend as candidates
#               are and timed by the vendor binary: the rate a kernel of that size reaches here now
#               (docs/METRICS.md, "Rooflines on CPUs"), printed with the schedule's fraction of it.
# How it is measured: default and scheduled by `ekb eval` (src/eval/timing.h: interleaved in one
# worker, each call cold — the kernel's buffers flushed from the caches outside the timed interval —,
# at least 5 runs and 0.1 s, until both medians are known to 1%). The vendor column uses the same
# convention and stopping rule on the same inputs (the first correctness trial), in its own process,
# checked against the same f64 reference. Every time is the median, with the interquartile range
# (p25-p75) beside it; speedups are ratios of medians over the default; the roofline fraction is
# attainable time / median time, attainable = max(ops / peak FLOP rate, bytes / bandwidth) from
# `ekb calibrate` (src/eval/roofline.h), as in `ekb eval`'s report. A printed fraction above 100% is
# listed at the end as an error and the script exits 3: the roof must be an upper bound (issue 23).
# OpenBLAS: the machine's OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE hold it back, so the vendor
# command alone runs without them; where OpenBLAS then falls back to its generic kernel on an
# AVX-512 CPU it does not know, SkylakeX is named for it; the kernel OpenBLAS chose is printed.
# Each row's target (issue #23) and the schedule's ratio to it: rows with a vendor column 0.8 of
# the vendor's rate (GEMM-like: gemm, fc, pwconv, conv2d as im2col + sgemm, decode GEMV), other
# memory-bound rows 85% of the same-size copy's; "of target" >= 1.00 meets it.
# The machine's load (uptime) is printed before and after: 2 shared cores make every number noisy.
#
# Usage: bench/cpu_schedules.sh [build dir] [workload ...]   (default: build, the table's workloads)
#        EKB_RECALIBRATE=1 re-measures the roofline first (otherwise the stored calibration is used,
#        and measured only when there is none by the current method: `ekb calibrate --if-missing`).
#        EKB_SCHEDULES_LIST=1 prints the table's workloads and stops (bench/tvm.sh times the same).
set -euo pipefail
cd "$(dirname "$0")/.."
build="${1:-build}"
shift || true
ekb="$build/ekb"
vendor="$build/ekb_cpu_vendor"
workloads=("$@")
if ((${#workloads[@]} == 0)); then
  # The largest f32 workload of each pattern that has a hand-written schedule, plus the 1024^3 GEMM;
  # the memory-bound rows (issue #4's bandwidth target) are the patterns' workloads of megabytes,
  # where a kernel's fixed costs (thread wake-up, the first cold misses) no longer dominate.
  # The GEMM-like odd shapes (issue #23): medium GEMM (200 x 220 x 240: no side a multiple of the
  # register tile) and a decode GEMV whose 576 outputs are a ragged block of 1024 (masked tails).
  workloads=(linalg.gemm/square_1024 linalg.gemm/medium nn.conv2d/resnet18_56x56x64 nn.conv2d/mbv1_stem_224x224x3
             nn.pwconv/mbv1_56x56x128 transformer.gemv_decode/smollm_down_1536x576
             audio.fir/asr_16000x255 transformer.sdpa/whisper_tiny_448x64
             linalg.jacobi_2d/medium
             transformer.gemv_decode/tinyllama_down_5632x2048 nn.relu6/mbv2_112x112x96
             nn.softmax/tinyllama_prefill_2048x2048 transformer.rmsnorm/tinyllama_128x2048
             transformer.layernorm/whisper_tiny_1500x384 nn.layernorm/deit_tiny_197x192
             nn.dwconv3x3/mbv1_112x112x32 img.gaussian3x3/hd_1280x720_f32)
fi
if [[ "${EKB_SCHEDULES_LIST:-}" == 1 ]]; then printf '%s\n' "${workloads[@]}"; exit 0; fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

echo "== load before: $(uptime)"
if [[ -n "${EKB_RECALIBRATE:-}" ]]; then
  "$ekb" calibrate --no-db | grep -E "bandwidth|copy|reads alone|peak"
else
  "$ekb" calibrate --no-db --if-missing | grep -E "bandwidth|copy|reads alone|peak|not measured"
fi

"$ekb" eval -s examples/schedules-cpu --call-timeout 120 --db "$work/bench.db" --run cpu-schedules --json "$work/eval.json" \
  "${workloads[@]}" > "$work/eval.log" 2>&1 || { cat "$work/eval.log"; exit 1; }
grep -E "^  roofline" "$work/eval.log" || true

if [[ -x "$vendor" ]]; then
  # OpenBLAS picks its kernel by CPU model; a model newer than the build (0.3.21 does not know
  # Emerald Rapids, model 207) gets the generic SSE3 "Prescott" kernel, a fifth of the machine's
  # rate. Then, on an AVX-512 CPU, the benchmark names SkylakeX (OpenBLAS's AVX-512 kernel) for it.
  vendor_env=(env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE)
  core=$("${vendor_env[@]}" "$vendor" --core | python3 -c 'import json,sys; print(json.load(sys.stdin)["openblas_core"])' || true)
  if [[ "$core" == Prescott ]] && grep -qw avx512f /proc/cpuinfo; then
    echo "(OpenBLAS does not know this CPU and chose its Prescott kernel: OPENBLAS_CORETYPE=SkylakeX for the vendor column)"
    vendor_env+=(OPENBLAS_CORETYPE=SkylakeX)
  fi
  "${vendor_env[@]}" "$vendor" "${workloads[@]}" > "$work/vendor.jsonl"
else
  echo "(no $vendor: OpenBLAS was not found when building, so there is no vendor column)"
  : > "$work/vendor.jsonl"
fi
echo "== load after: $(uptime)"

python3 - "$work/eval.json" "$work/vendor.jsonl" <<'PY'
import json, sys
results = {r["workload"]: r for r in json.load(open(sys.argv[1]))["results"]}
vendor = {}
for line in open(sys.argv[2]):
    doc = json.loads(line)
    if "openblas_core" in doc:
        print(f"OpenBLAS kernel: {doc['openblas_core']} ({doc['openblas_config'].strip()}), {doc['openblas_threads']} threads")
    else:
        vendor[doc["workload"]] = doc

def cell(t):  # median (p25-p75) in ms
    return f"{t['median']:8.3f} ({t['p25']:.3f}-{t['p75']:.3f})" if t else "-"

def pct(x):
    return f"{100 * x:5.1f}%" if x is not None else "    -"

print()
print(f"{'workload':<38} {'bound':<7} {'default ms (IQR)':>26} {'scheduled ms (IQR)':>26} {'vendor ms (IQR)':>26}"
      f" {'x sched':>8} {'x vendor':>8} {'roof def':>8} {'roof sch':>8} {'roof ven':>8} {'sch/ven':>7}"
      f" {'copy ms':>8} {'of copy':>7} {'target':>10} {'of target':>9}")
above_roof = []  # (workload, which, fraction) of every printed fraction above 100%
for w, r in results.items():
    roof = r.get("roofline") or {}
    bound = roof.get("bound", "-")
    if not r["correct"]:
        print(f"{w:<38} scheduled solution failed: {r['error']}: {r['message'][:120]}")
        continue
    base, sched = r["baseline_ms"], r["time_ms"]
    v = vendor.get(w, {})
    vt = v.get("time_ms")
    note = ""
    if v.get("error") and "no vendor" not in v["error"]:
        note = f"  (vendor: {v['error'][:60]})"
    x_vendor = f"{base['median'] / vt['median']:7.2f}x" if vt else "       -"
    sch_ven = f"{vt['median'] / sched['median']:6.2f}" if vt else "      -"
    copy = (v.get("copy") or {}).get("time_ms") if bound == "memory" else None
    copy_cells = f" {copy['median']:8.3f} {pct(copy['median'] / sched['median']):>7}" if copy else f" {'-':>8} {'-':>7}"
    # The row's target: 0.8 of the vendor's rate where there is one, else 85% of the same-size copy's.
    if vt:
        target_cells = f" {'0.8 vendor':>10} {vt['median'] / sched['median'] / 0.8:9.2f}"
    elif copy:
        target_cells = f" {'85% copy':>10} {copy['median'] / sched['median'] / 0.85:9.2f}"
    else:
        target_cells = f" {'-':>10} {'-':>9}"
    for which, x in (("default", roof.get("baseline_fraction")), ("scheduled", roof.get("fraction")),
                     ("vendor", v.get("roofline_fraction"))):
        if x is not None and x > 1.0:
            above_roof.append((w, which, x))
    print(f"{w:<38} {bound:<7} {cell(base):>26} {cell(sched):>26} {cell(vt):>26} {r['speedup']:7.2f}x {x_vendor}"
          f" {pct(roof.get('baseline_fraction')):>8} {pct(roof.get('fraction')):>8} {pct(v.get('roofline_fraction')):>8} {sch_ven}"
          f"{copy_cells}{target_cells}{note}")
print()
print("x sched / x vendor: speedup over the default lowering (ratio of medians); roof: fraction of the")
print("roofline (memory-bound rows: of the measured bandwidth); sch/ven: scheduled rate / vendor rate;")
print("copy: a same-size copy (the row's input bytes read, its output bytes written with streaming stores,")
print("all cores, compiled and timed cold like a candidate): the rate a kernel of that size can reach;")
print("of copy: its time / the scheduled time. target: 0.8 of the vendor's rate, or 85% of the copy's;")
print("of target: the schedule's rate / the target rate (>= 1.00 meets it).")
if above_roof:
    # A roofline is an upper bound: a kernel above it means the op counts or the calibrated roofs
    # are wrong (docs/METRICS.md), never that the kernel is that good.
    print("\nERROR: roofline fractions above 100% (the roof is not an upper bound; see docs/METRICS.md):")
    for w, which, x in above_roof:
        print(f"  {w:<38} {which:<9} {100 * x:6.1f}%")
    sys.exit(3)
PY
