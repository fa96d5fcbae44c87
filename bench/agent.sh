#!/usr/bin/env bash
# LEKA's search policy on the cpu (issue 20's targets; docs/AGENT.md, "The experiment"):
#  1. A fixed sample: N non-held-out workloads, one per pattern, spread over the suite in list
#     order (domains interleaved, so that a run cut short has reached every domain), then the
#     held-out workloads of the same patterns.
#  2. `ekb experiment --methods leka:search --budget evaluations=E` on the sample, judged against
#     the native default, then the same solutions against TVM default and TVM tuned (MetaSchedule at
#     E trials: the same number of measured candidates as the search): Fast@1.0, Fast@1.5, geomean
#     speedup and the wall time per workload, for the sample and for the held-out part alone.
#     Targets: Fast@1.0 >= 75% against native, >= 50% against TVM default; against TVM tuned,
#     aim >= 50%.
#  3. The hand-written schedules' workloads (examples/schedules-cpu; bench/cpu_schedules.sh's
#     list): the search's speed as a fraction of the hand schedule's (both timed against the native
#     default). Target: >= 80%.
# Everything goes to $EKB_BENCH_OUT (default bench/results/agent-search): each step resumes, so a
# killed run continues where it stopped (`ekb experiment` skips what it finished).
# Usage: bench/agent.sh [N] [E] [build dir]   (default 60 64 build)
#   EKB_BENCH_PARTS: any of "sample baselines schedules" (default all three)
set -euo pipefail
cd "$(dirname "$0")/.."
n="${1:-60}"
evals="${2:-64}"
ekb="$(cd "${3:-build}" && pwd)/ekb"
out="${EKB_BENCH_OUT:-bench/results/agent-search}"
parts=" ${EKB_BENCH_PARTS:-sample baselines schedules} "
mkdir -p "$out"
export EKB_CACHE_DIR="${EKB_CACHE_DIR:-$(cd "$out" && pwd)/cache}"
echo "== leka:search, $evals evaluations per workload, results in $out ($(uptime))"

# The sample, written once so that every later run of the benchmark uses the same workloads.
if [ ! -s "$out/sample.txt" ]; then
  "$ekb" list --json | python3 bench/agent_sample.py "$n" --heldout > "$out/sample.txt"
fi
mapfile -t sample < "$out/sample.txt"
heldout=$("$ekb" list --json | python3 -c "
import json, sys
print(' '.join(w['name'] for w in json.load(sys.stdin) if w['heldout']))")
echo "   sample: $(grep -c . "$out/sample.txt") workloads ($(for w in "${sample[@]}"; do [[ " $heldout " == *" $w "* ]] && echo x; done | wc -l) held out)"

experiment() {  # BASELINE [WORKLOADS...]: the experiment against BASELINE, its table in $out/table-BASELINE.txt
  local baseline="$1"
  shift
  "$ekb" experiment --methods leka:search --budget "evaluations=$evals" --baseline "$baseline" --out "$out/exp" "$@" \
    > "$out/experiment-$baseline.log" 2> "$out/experiment-$baseline.err" \
    || { echo "   experiment against $baseline failed: $(tail -3 "$out/experiment-$baseline.err")"; return 1; }
  sed -n '/^experiment /,$p' "$out/experiment-$baseline.log" | tee "$out/table-$baseline.txt"
}

# Fast@p and the geomean over one evaluation's results, for the whole sample and the held-out part.
summary() {  # RESULTS_JSON LABEL
  python3 - "$1" "$2" "$heldout" <<'PY'
import json, math, sys
rows = json.load(open(sys.argv[1]))["results"]
held = set(sys.argv[3].split())
for part, rs in (("sample", rows), ("held out", [r for r in rows if r["workload"] in held])):
    if not rs:
        continue
    sp = [r["speedup"] for r in rs if r.get("correct") and r.get("speedup")]
    fast = lambda p: 100.0 * sum(1 for x in sp if x > p) / len(rs)
    geo = math.exp(sum(map(math.log, sp)) / len(sp)) if sp else float("nan")
    sure = 100.0 * sum(1 for r in rs if r.get("correct") and (r.get("speedup_ci95") or [0])[0] > 1.0) / len(rs)
    wall = [r["ledger"]["wall_s"] for r in rs if r.get("ledger")]
    print(f"   {sys.argv[2]:<22} {part:<9} {len(rs):>3} workloads: correct {100.0 * sum(r['correct'] for r in rs) / len(rs):5.1f}%,"
          f" Fast@1.0 {fast(1.0):5.1f}% (95% interval above 1: {sure:5.1f}%), Fast@1.5 {fast(1.5):5.1f}%, geomean {geo:.2f}x,"
          f" search wall per workload median {sorted(wall)[len(wall) // 2] if wall else float('nan'):.0f} s")
PY
}

if [[ "$parts" == *" sample "* ]]; then
  echo "== against the native default"
  experiment native "${sample[@]}"
  summary "$out/exp/leka-search.results.json" "against native"
fi
if [[ "$parts" == *" baselines "* ]]; then
  for b in tvm tvm-tuned; do
    echo "== the same solutions against $b"
    "$ekb" eval -s "$out/exp/leka-search" --baseline "$b" --tune-trials "$evals" --db "$out/exp/results.db" \
      --run "vs-$b" --json "$out/vs-$b.json" "${sample[@]}" > "$out/vs-$b.log" 2>&1 \
      || echo "   eval against $b failed: $(tail -3 "$out/vs-$b.log")"
    [ -s "$out/vs-$b.json" ] && summary "$out/vs-$b.json" "against $b"
  done
fi
if [[ "$parts" == *" schedules "* ]]; then
  mapfile -t hand < <(EKB_SCHEDULES_LIST=1 bash bench/cpu_schedules.sh)
  echo "== the hand-written schedules' ${#hand[@]} workloads: the search's speed as a fraction of the hand schedule's"
  "$ekb" experiment --methods leka:search --budget "evaluations=$evals" --out "$out/exp-schedules" "${hand[@]}" \
    > "$out/schedules-search.log" 2>&1 || echo "   the search failed: $(tail -3 "$out/schedules-search.log")"
  [ -s "$out/hand.json" ] || "$ekb" eval -s examples/schedules-cpu --db "$out/exp-schedules/results.db" --run hand \
    --json "$out/hand.json" "${hand[@]}" > "$out/hand.log" 2>&1 || echo "   eval of the hand schedules failed"
  python3 - "$out/exp-schedules/leka-search.results.json" "$out/hand.json" <<'PY'
import json, math, sys
search = {r["workload"]: r for r in json.load(open(sys.argv[1]))["results"]}
hand = {r["workload"]: r for r in json.load(open(sys.argv[2]))["results"]}
ratios = []
for w in sorted(hand):
    h, s = hand[w], search.get(w, {})
    hs = h.get("speedup") if h.get("correct") else None
    ss = s.get("speedup") if s.get("correct") else None
    ratio = ss / hs if hs and ss else None
    if ratio:
        ratios.append(ratio)
    print(f"   {w:<48} hand {hs or 0:6.2f}x  search {ss or 0:6.2f}x  search/hand {ratio or 0:5.2f}")
if ratios:
    print(f"   geomean search/hand {math.exp(sum(map(math.log, ratios)) / len(ratios)):.2f} over {len(ratios)};"
          f" at least 0.8 on {sum(r >= 0.8 for r in ratios)} of {len(ratios)}")
PY
fi
