#!/usr/bin/env bash
# TVM's kernels for a GPU backend as a solutions directory (docs/SOLUTIONS.md), generated here where
# TVM is installed, for a GPU machine that has no Python (docs/TVM.md, "The gpu route"): there
# `ekb eval -b cuda -s DIR` evaluates them like any candidate, under the full protocol and timed
# against the native default (bench/gpu.sh's `tvm` step does that when DIR is carried).
#  N workloads spread evenly over the suite (every (total/N)-th in list order, as bench/tvm.sh
#  picks them); a workload TVM cannot compile gets no file and is listed at the end (it then
#  counts as `missing` on the device).
# Usage: bench/tvm_gpu_sources.sh [N|all] [build dir] [cuda|opencl] [out dir]
#   EKB_BENCH_NAMES=FILE: the workloads listed in FILE instead (e.g. bench/agent_sample.py's)
#   default: 120 build cuda bench/tvm-gpu (the directory bench/gpu.sh looks for)
set -euo pipefail
cd "$(dirname "$0")/.."
n="${1:-120}"
ekb="${2:-build}/ekb"
backend="${3:-cuda}"
out="${4:-bench/tvm-gpu}"
ext=$([ "$backend" = cuda ] && echo cu || echo cl)
mkdir -p "$out"
if [ -n "${EKB_BENCH_NAMES:-}" ]; then
  mapfile -t names < "$EKB_BENCH_NAMES"  # the workloads named in that file (N is then ignored)
else
  mapfile -t names < <("$ekb" list --json | python3 -c "
import json, sys
ws = [w['name'] for w in json.load(sys.stdin)]
n = len(ws) if '$n' == 'all' else min(int('$n'), len(ws))
print('\n'.join(ws[int(k * len(ws) / n)] for k in range(n)))")
fi
# `ekb emit --out` compiles the workloads in one process, so one TVM bridge (importing tvm costs
# more than most compiles); $EKB_BENCH_SHARDS processes side by side (default 1).
shards="${EKB_BENCH_SHARDS:-1}"
for ((s = 0; s < shards; s++)); do
  slice=()
  for ((i = s; i < ${#names[@]}; i += shards)); do slice+=("${names[i]}"); done
  "$ekb" emit --compiler tvm -b "$backend" --out "$out" "${slice[@]}" > "$out/emit.$s.log" 2>&1 &
done
wait || true
written=$(find "$out" -name "*.$ext" | wc -l)
echo "$written .$ext files in $out for ${#names[@]} workloads"
cat "$out"/emit.*.log | grep '^  no source' || true
rm -f "$out"/emit.*.log
printf '%s\n' "${names[@]}" > "$out/workloads.txt"
