#!/usr/bin/env bash
# GPU tuning of TVM's kernels as a batch (docs/TVM.md, "GPU tuning"), the part that needs TVM:
# a solutions directory of candidates for a GPU machine that has no Python. Per workload, sample 0
# is TVM's untuned translation and samples 1..K are schedules sampled from MetaSchedule's design
# space for the backend (`ekb tvm-tune candidates`). Carried to the device, bench/gpu.sh's
# `tvm-tune` step evaluates them (`ekb eval -s DIR`, timed) and keeps the best as records (`ekb
# tvm-tune select`), which it prints and which come back under $OUT/tvm-records.
#  N workloads, one per pattern so that the domains vary, spread over the suite in list order,
#  among those with sampled schedules (a workload that is not only pure definitions, or whose loop
#  IR has no block form, has nothing to tune: sample 0 alone would be carried for nothing).
# Usage: bench/tvm_gpu_tune.sh [N] [build dir] [cuda|opencl] [out dir] [K]
#   default: 30 build cuda bench/tvm-gpu-tune 8 (the directory bench/gpu.sh's tvm-tune step looks
#   for; also packed as DIR.tar.gz, which it unpacks when only that is carried)
# Each workload's command runs under $EKB_BENCH_WRAP when set (on a shared machine:
# EKB_BENCH_WRAP="flock /tmp/ekb-cpu.lock nice -n 10"); a workload already in the directory is kept.
set -euo pipefail
cd "$(dirname "$0")/.."
n="${1:-30}"
ekb="${2:-build}/ekb"
backend="${3:-cuda}"
out="${4:-bench/tvm-gpu-tune}"
k="${5:-8}"
wrap=(${EKB_BENCH_WRAP:-})
mkdir -p "$out"
# One workload per pattern, spread over the suite in list order; those without sampled schedules
# (no block form) are skipped (--skip-untunable) until N have them.
mapfile -t names < <("$ekb" list --json | python3 -c "
import json, sys
ws, seen = [], set()
for w in json.load(sys.stdin):
    if w['pattern'] not in seen and w.get('valid', True):
        seen.add(w['pattern'])
        ws.append(w['name'])
n = int('$n')
# N evenly spread first, then the same spread shifted by a quarter, a half, ...: a skipped
# workload is replaced by one from further along, so that the domains stay spread.
order = []
for shift in range(4):
    for i in range(n):
        w = ws[min(len(ws) - 1, (i * len(ws) + shift * len(ws) // 4) // n)]
        if w not in order:
            order.append(w)
print('\n'.join(order))")
ext=$([ "$backend" = cuda ] && echo cu || echo cl)
kept=()
for w in "${names[@]}"; do
  [ "${#kept[@]}" -ge "$n" ] && break
  if [ ! -e "$out/$w.s0.$ext" ]; then
    "${wrap[@]}" "$ekb" tvm-tune candidates --skip-untunable -b "$backend" -k "$k" -o "$out" "$w" 2>&1 \
      | grep -v '^[0-9]* of ' || true
  fi
  [ -e "$out/$w.s0.$ext" ] && kept+=("$w")
done
names=("${kept[@]}")
printf '%s\n' "${names[@]}" > "$out/workloads.txt"
# Packed for the carry (bench/gpu.sh unpacks it when the directory itself is not carried).
tar czf "$out.tar.gz" -C "$(dirname "$out")" "$(basename "$out")"
echo "$(ls "$out"/*/*.s0.* 2>/dev/null | wc -l) workloads in $out (K = $k, $backend): $(du -sh "$out" | cut -f1)," \
  "packed $(du -sh "$out.tar.gz" | cut -f1) ($out.tar.gz)"
