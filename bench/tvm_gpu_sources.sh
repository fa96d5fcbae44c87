#!/usr/bin/env bash
# TVM's kernels for a GPU backend as a solutions directory (docs/SOLUTIONS.md), generated here where
# TVM is installed, for a GPU machine that has no Python (docs/TVM.md, "The gpu route"): there
# `ekb eval -b cuda -s DIR` evaluates them like any candidate, under the full protocol and timed
# against the native default (bench/gpu.sh's `tvm` step does that when DIR is carried).
#  N workloads spread evenly over the suite (every (total/N)-th in list order, as bench/tvm.sh
#  picks them); a workload TVM cannot compile gets no file and is listed at the end (it then
#  counts as `missing` on the device).
# Usage: bench/tvm_gpu_sources.sh [N|all] [build dir] [cuda|opencl] [out dir]
#   default: 120 build cuda bench/tvm-gpu (the directory bench/gpu.sh looks for)
set -euo pipefail
cd "$(dirname "$0")/.."
n="${1:-120}"
ekb="${2:-build}/ekb"
backend="${3:-cuda}"
out="${4:-bench/tvm-gpu}"
ext=$([ "$backend" = cuda ] && echo cu || echo cl)
mkdir -p "$out"
mapfile -t names < <("$ekb" list --json | python3 -c "
import json, sys
ws = [w['name'] for w in json.load(sys.stdin)]
n = len(ws) if '$n' == 'all' else min(int('$n'), len(ws))
print('\n'.join(ws[int(k * len(ws) / n)] for k in range(n)))")
written=0
failed=()
for w in "${names[@]}"; do
  pattern="${w%%/*}"
  mkdir -p "$out/$pattern"
  if "$ekb" emit "$w" --compiler tvm -b "$backend" --source-only > "$out/$w.$ext.tmp" 2> "$out/$w.$ext.err"; then
    mv "$out/$w.$ext.tmp" "$out/$w.$ext"
    rm -f "$out/$w.$ext.err"
    written=$((written + 1))
  else
    rm -f "$out/$w.$ext.tmp"
    failed+=("$w: $(head -c 200 "$out/$w.$ext.err" | tr '\n' ' ')")
    rm -f "$out/$w.$ext.err"
  fi
done
echo "$written of ${#names[@]} workloads written to $out (.$ext)"
for f in "${failed[@]}"; do echo "  no source: $f"; done
printf '%s\n' "${names[@]}" > "$out/workloads.txt"
