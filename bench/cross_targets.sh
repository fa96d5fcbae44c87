#!/usr/bin/env bash
# The edge targets' correctness sweep (issue 21; docs/DEVICES.md, "Targets"): the native default of
# a fixed sample of N workloads (bench/agent_sample.py: the first workload of N patterns spread
# over the suite, every domain) cross-compiled for each target and checked under qemu-user by that
# target's ekb-device worker, correctness only; the host's run of the same sample, also untimed,
# is the reference for the wall time. Prints per target: correct of N, the failures by kind, the
# wall time and its ratio to the host's.
# Usage: bench/cross_targets.sh [N] [build dir] [TARGET...]
#   (default 100 build, and every target: host aarch64-linux-gnu aarch64-linux-gnu+sve256
#    riscv64-linux-gnu riscv64-linux-gnu+rvv128). Results in $EKB_BENCH_OUT (default
#    bench/results/cross-targets); each target's run resumes where it stopped.
set -euo pipefail
cd "$(dirname "$0")/.."
n="${1:-100}"
ekb="$(cd "${2:-build}" && pwd)/ekb"
shift 2 2>/dev/null || shift $#
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(host aarch64-linux-gnu aarch64-linux-gnu+sve256 riscv64-linux-gnu riscv64-linux-gnu+rvv128)
out="${EKB_BENCH_OUT:-bench/results/cross-targets}"
mkdir -p "$out"
export EKB_CACHE_DIR="${EKB_CACHE_DIR:-$(cd "$out" && pwd)/cache}"
[ -s "$out/sample.txt" ] || "$ekb" list --json | python3 bench/agent_sample.py "$n" > "$out/sample.txt"
mapfile -t sample < "$out/sample.txt"
echo "== the native default of ${#sample[@]} workloads, correctness only, per target ($(uptime))"
for t in "${targets[@]}"; do
  start=$(date +%s.%N)
  "$ekb" eval -s native --target "$t" --no-timing --db "$out/cross.db" --run "sweep-$t" --json "$out/$t.json" \
    "${sample[@]}" > "$out/$t.log" 2>&1 || true
  end=$(date +%s.%N)
  python3 - "$out/$t.json" "$t" "$start" "$end" "$out/wall.txt" <<'PY'
import collections, json, sys
path, target, start, end, wall_file = sys.argv[1], sys.argv[2], float(sys.argv[3]), float(sys.argv[4]), sys.argv[5]
try:
    doc = json.load(open(path))
except (OSError, ValueError):
    print(f"   {target:<26} no results (see its log)")
    sys.exit(0)
rows = doc["results"]
wall = end - start
walls = dict(line.split() for line in open(wall_file)) if __import__("os").path.exists(wall_file) else {}
walls[target] = f"{wall:.1f}"
with open(wall_file, "w") as f:
    f.writelines(f"{k} {v}\n" for k, v in walls.items())
kinds = collections.Counter(r["error"] for r in rows if not r["correct"])
host = float(walls.get("host", 0)) or None
print(f"   {target:<26} correct {sum(r['correct'] for r in rows):>3} of {len(rows)}"
      f"   wall {wall:7.1f} s{f' ({wall / host:.1f}x the host)' if host and target != 'host' else ''}"
      f"   device: {doc.get('device', {}).get('name', '?')}"
      + (f"\n{'':29}failures: " + ", ".join(f"{k} {v}" for k, v in kinds.most_common()) if kinds else ""))
for r in rows:
    if not r["correct"]:
        print(f"{'':29}{r['workload']}: {r['error']}: {r['message'].splitlines()[0][:160] if r['message'] else ''}")
PY
done
