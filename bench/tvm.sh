#!/usr/bin/env bash
# The tvm compiler interface (docs/TVM.md) on a backend (cpu, cuda or opencl): coverage and
# compile time.
#  1. N workloads spread evenly over the suite (every (total/N)-th in list order; default 100;
#     `all` for the whole suite): `ekb eval -s tvm --no-timing` with a cold TVM and compile cache,
#     then again warm. How many compile and are correct, the failures by cause; compile time per
#     workload (TVM's bridge plus clang) cold and cached.
#  2. The same workloads through `-s native --no-timing` (cold): the native compile time beside it.
# Usage: bench/tvm.sh [N] [build dir] [backend]   (opencl: the device of $EKB_OPENCL_PLATFORM etc.)
set -euo pipefail
cd "$(dirname "$0")/.."
n="${1:-100}"
ekb="${2:-build}/ekb"
backend="${3:-cpu}"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export EKB_CACHE_DIR="$work/cache"

mapfile -t names < <("$ekb" list --json | python3 -c "
import json, sys
ws = [w['name'] for w in json.load(sys.stdin)]
n = len(ws) if '$n' == 'all' else min(int('$n'), len(ws))
print('\n'.join(ws[int(k * len(ws) / n)] for k in range(n)))")
for run in tvm-cold tvm-warm native-cold; do
  solutions="${run%%-*}"
  start=$(date +%s.%N)
  "$ekb" eval -s "$solutions" -b "$backend" --no-timing --db "$work/$run.db" --json "$work/$run.json" "${names[@]}" \
    > "$work/$run.log" 2>&1 || true
  end=$(date +%s.%N)
  echo "== $run ($backend): ${#names[@]} workloads in $(python3 -c "print(f'{$end - $start:.0f}')") s"
done
python3 - "$work" <<'PY'
import json, sys, collections, statistics as st
work = sys.argv[1]
def load(run):
    return {r["workload"]: r for r in json.load(open(f"{work}/{run}.json"))["results"]}
cold, warm, native = load("tvm-cold"), load("tvm-warm"), load("native-cold")
n = len(cold)
compiled = sum(r["compiled"] for r in cold.values())
correct = sum(r["correct"] for r in cold.values())
print(f"coverage: {correct}/{n} correct ({100 * correct / n:.1f}%), {compiled}/{n} compiled")
by_domain = collections.defaultdict(lambda: [0, 0, 0])
for w, r in cold.items():
    d = w.split(".")[0]
    by_domain[d][0] += r["compiled"]
    by_domain[d][1] += r["correct"]
    by_domain[d][2] += 1
print("per domain (compiled/correct/workloads): " +
      ", ".join(f"{d} {m}/{c}/{t}" for d, (m, c, t) in sorted(by_domain.items())))
causes = collections.Counter()
examples = {}
for w, r in sorted(cold.items()):
    if r["correct"]:
        continue
    msg = (r.get("message") or "").split("\n")[0]
    key = r["error"] + ": " + msg[:90]
    causes[key] += 1
    examples.setdefault(key, w)
for key, count in causes.most_common():
    print(f"  {count:4d}  {key}   (e.g. {examples[key]})")
def secs(rs, w):
    c = rs.get(w, {}).get("cost", {})
    return c.get("compile_s")
for label, rs in (("tvm cold", cold), ("tvm cached", warm), ("native cold", native)):
    xs = [secs(rs, w) for w in cold if secs(rs, w) is not None]
    if xs:
        print(f"compile s per workload, {label}: median {st.median(xs):.2f}, mean {st.mean(xs):.2f}, max {max(xs):.2f}")
PY
