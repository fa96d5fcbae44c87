#!/usr/bin/env bash
# The cuda backend on a GPU machine, in one call (issue #5):
#  1. what the machine has (GPU, nvcc, g++, the build's dependencies), then a CMake + g++ build;
#  2. the GPU tests: the CUDA corpus (tests/adversarial/cuda/), the native default on a few
#     workloads, a sticky error contained;
#  3. the whole suite's correctness with `ekb eval --backend cuda -s native` (the default GPU
#     schedule evaluated against itself, so every result is "correct or not" under the full
#     protocol), in parallel shards, then a short table by domain and the failures.
# Usage: bench/gpu.sh [N|all] [build dir]   (N: that many workloads spread evenly over the suite)
# Logs and results JSON go to $OUT when set (the device machine), else to a temporary directory.
set -uo pipefail
cd "$(dirname "$0")/.."
n="${1:-all}"
build="${2:-build-gpu}"
out="${OUT:-$(mktemp -d)}"
work=$(mktemp -d)
export EKB_CACHE_DIR="$work/cache"
t0=$(date +%s)

echo "== machine"
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm --format=csv,noheader 2>&1 | head -2
nvcc --version 2>&1 | tail -2 | head -1
g++ --version 2>&1 | head -1
cmake --version 2>&1 | head -1
echo "ninja $(ninja --version 2>&1)"
ls -l /dev/nvidia* 2>&1 | awk '{print "  " $1, $NF}' | head -4
echo "== build dependencies (CMake fetches nothing: all must be installed)"
missing=0
for h in fmt/core.h nlohmann/json.hpp CLI/CLI.hpp SQLiteCpp/SQLiteCpp.h sqlite3.h xxhash.h gtest/gtest.h; do
  if [ -e "/usr/include/$h" ] || [ -e "/usr/local/include/$h" ]; then echo "  <$h> found"
  else echo "  <$h> MISSING"; [ "$h" = gtest/gtest.h ] || missing=1; fi
done
tests=OFF
{ [ -e /usr/include/gtest/gtest.h ] || [ -e /usr/local/include/gtest/gtest.h ]; } && tests=ON
prebuilt=0
if [ "$missing" = 1 ]; then
  echo "!! a dependency of the build is missing on this machine: cannot build ekb here"
  [ -x "$build/ekb" ] || exit 1
  # Binaries built on another machine and carried here (their libraries on $LD_LIBRARY_PATH).
  echo "!! using the ekb carried in $build instead"
  prebuilt=1
  [ -x "$build/tests/ekb_tests" ] && tests=ON || tests=OFF
fi

if [ "$prebuilt" = 0 ]; then
echo "== build ($build, g++, Release, tests $tests)"
if ! CXX=g++ cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DEKB_BUILD_TESTS=$tests \
    > "$out/configure.log" 2>&1; then
  tail -20 "$out/configure.log"; exit 1
fi
targets=(ekb); [ "$tests" = ON ] && targets+=(ekb_tests)
if ! cmake --build "$build" -j"$(nproc)" --target "${targets[@]}" > "$out/build.log" 2>&1; then
  grep -E "error|Error" "$out/build.log" | head -20; exit 1
fi
echo "  built in $(( $(date +%s) - t0 )) s"
fi
ekb="$build/ekb"

if [ "$tests" = ON ]; then
  echo "== GPU tests"
  "$build/tests/ekb_tests" --gtest_filter='CudaDevice.*:Files/CudaCorpus.*:CudaBackend.*:CudaDriver.*:CudaEmitter.*' \
    > "$out/gpu_tests.log" 2>&1
  grep -E "^\[  (FAILED|  OK|  SKIPPED) \]|Failure|Expected|Which is|error:" "$out/gpu_tests.log" | head -40
  tail -3 "$out/gpu_tests.log"
fi

echo "== the suite on cuda: native default, correctness under the full protocol"
mapfile -t names < <("$ekb" list --json | python3 -c "
import json, sys
ws = [w['name'] for w in json.load(sys.stdin)]
n = len(ws) if '$n' == 'all' else min(int('$n'), len(ws))
print('\n'.join(ws[int(k * len(ws) / n)] for k in range(n)))")
shards=$(( $(nproc) / 2 )); [ "$shards" -gt 8 ] && shards=8; [ "$shards" -lt 1 ] && shards=1
t1=$(date +%s)
for ((k = 0; k < shards; ++k)); do
  part=()
  for ((i = k; i < ${#names[@]}; i += shards)); do part+=("${names[i]}"); done
  # A time limit per shard: a run cut short still has its results in its database (ekb report).
  # Correctness only (--no-timing): the self-speedup of the default is 1 by construction, and the
  # per-pattern timing table is the scheduled kernels' business.
  timeout "${EKB_GPU_SHARD_TIMEOUT:-420}" "$ekb" eval --backend cuda -s native --db "$work/shard$k.db" --run "gpu-$k" \
    --json "$work/gpu-$k.json" --no-timing "${part[@]}" > "$work/eval-$k.log" 2>&1 &
done
wait
echo "  ${#names[@]} workloads in $shards shards: $(( $(date +%s) - t1 )) s"
for ((k = 0; k < shards; ++k)); do
  [ -e "$work/gpu-$k.json" ] || { echo "  shard $k did not finish: $(tail -1 "$work/eval-$k.log")"; }
done

# At most 8 files come back from the device machine: one log per shard is too many, so the shards'
# logs and results are merged into one file each.
cat "$work"/eval-*.log > "$out/eval.log" 2>/dev/null
python3 - "$work" "$shards" "$out" <<'PY'
import json, sys, os, collections
out, shards = sys.argv[1], int(sys.argv[2])
rs, device = [], None
for k in range(shards):
    p = f"{out}/gpu-{k}.json"
    if not os.path.exists(p):
        print(f"  shard {k}: no results (see eval.log)"); continue
    doc = json.load(open(p)); rs += doc["results"]; device = device or doc.get("device")
if device: print(f"  device: {device.get('name')} | {device.get('compiler')}")
by = collections.defaultdict(list)
for r in rs: by[r["task"].split(".")[0]].append(r)
print(f"  {'domain':<12}{'n':>5}{'compiled':>10}{'correct':>9}{'check s (median)':>18}{'max':>8}")
def row(name, group):
    t = sorted(r["cost"]["check_s"] for r in group if r.get("cost"))
    med = t[len(t) // 2] if t else float("nan")
    print(f"  {name:<12}{len(group):>5}{sum(bool(r['compiled']) for r in group):>10}"
          f"{sum(bool(r['correct']) for r in group):>9}{med:>18.3f}{(t[-1] if t else float('nan')):>8.2f}")
for d in sorted(by): row(d, by[d])
row("all", rs)
json.dump(rs, open(f"{sys.argv[3]}/gpu-results.json", "w"))
bad = [r for r in rs if not r.get("correct")]
if bad:
    print(f"  failures ({len(bad)}):")
    for r in bad[:40]:
        print(f"    {r['workload']}: {r.get('error')}: {(r.get('message') or '')[:160]}")
PY
echo "== total $(( $(date +%s) - t0 )) s"
rm -rf "$work"
