#!/usr/bin/env bash
# The tvm compiler interface (docs/TVM.md). Two modes:
#   bench/tvm.sh [N] [build dir] [backend]             coverage and compile time (below)
#   bench/tvm.sh side-by-side [N] [TRIALS] [build dir]  native default vs TVM default vs TVM tuned
#
# side-by-side (cpu): N workloads spread evenly over the suite (default 30; every domain is
# reached), MetaSchedule's budget TRIALS per workload (default 64). Per workload, with a cache of
# the benchmark's own (so the first compile of each is cold):
#   tvm            `eval -s tvm`: TVM default timed against the native default (its compile cold)
#   tvm-tuned      `eval -s tvm-tuned`: TVM tuned timed against the native default (cold: tuning)
#   *-cached       the same two again with --no-timing: the compile time when cached
#   tuning         `eval -s native --baseline tvm-tuned --no-timing`: whether it was tuned, and why not
# Then the geomean speedup of TVM default and of TVM tuned over the native default (1x by
# definition), overall and per domain, over the workloads where both are correct and timed, and
# TVM's compile times (the bridge and clang; cold includes the search). No native compile time:
# with `-s native` the candidate is the baseline's own compile, so its cost reads as cached. Each workload's commands run under $EKB_BENCH_WRAP when set (on a shared
# machine: EKB_BENCH_WRAP="flock /tmp/ekb-cpu.lock nice -n 10"), one workload at a time; results go to
# $EKB_BENCH_OUT (default: a temporary directory), one JSON per workload and run, so a benchmark
# cut short still reports what it finished (`bench/tvm.sh side-by-side-report DIR` re-reads them).
# linalg.gemm/square_1024 is added at the end when EKB_BENCH_GEMM=1: TVM tuned beside OpenBLAS
# (build/ekb_cpu_vendor, OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE unset for that command only).
# EKB_BENCH_RETIME=1 times the finished workloads' TVM default and TVM tuned again (their compiles
# and records cached: minutes, not hours), into *-retimed.json, which the report then uses: for
# runs timed while something else loaded the machine (parallel kernels wait for a preempted thread).
# EKB_BENCH_EXAMPLES=1 then times the hand-written schedules (examples/schedules-cpu, on
# bench/cpu_schedules.sh's workloads) against TVM tuned at the same trials.
#
# coverage mode (cpu, cuda or opencl): coverage and compile time.
#  1. N workloads spread evenly over the suite (every (total/N)-th in list order; default 100;
#     `all` for the whole suite): `ekb eval -s tvm --no-timing` with a cold TVM and compile cache,
#     then again warm. How many compile and are correct, the failures by cause; compile time per
#     workload (TVM's bridge plus clang) cold and cached.
#  2. The same workloads through `-s native --no-timing` (cold): the native compile time beside it.
# Usage: bench/tvm.sh [N] [build dir] [backend]   (opencl: the device of $EKB_OPENCL_PLATFORM etc.)
#  For the whole suite: EKB_BENCH_SHARDS=K runs K `ekb eval`s side by side over interleaved slices
#  (each resumable), EKB_BENCH_RUNS picks the passes (default "tvm-cold tvm-warm native-cold";
#  "tvm-cold" alone for coverage), and EKB_BENCH_OUT keeps the databases and results there (a
#  killed benchmark started again with the same directory resumes where it stopped).
set -euo pipefail
self="$(cd "$(dirname "$0")" && pwd)/$(basename "$0")"
cd "$(dirname "$0")/.."

side_by_side_report() {
  python3 - "$1" <<'PY'
import json, sys, os, math, collections, glob, statistics as st
out = sys.argv[1]
runs = collections.defaultdict(dict)
for path in glob.glob(os.path.join(out, "*.json")):
    base = os.path.basename(path)[:-5]
    workload, _, run = base.rpartition("@")
    try:
        results = json.load(open(path))["results"]
    except (ValueError, KeyError):
        continue
    if results and "+" in workload:  # not examples@... or openblas
        runs[workload.replace("+", "/")][run] = results[0]
def speed(r):
    return r["speedup"] if r and r.get("correct") and r.get("speedup") else None
def geo(xs):
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")
rows = []
print(f"{'workload':<48} {'tvm x':>7} {'tuned x':>8} {'tuned?':<7} {'tvm c':>7} {'tvm $':>7} {'tuned c':>8} {'tuned $':>8}  note")
for w in sorted(runs):
    r = runs[w]
    # A re-timing on a quiet machine (EKB_BENCH_RETIME) replaces the first timing; compile times
    # stay the first run's (the cold compile, the search included).
    tvm, tuned = speed(r.get("tvm-retimed", r.get("tvm"))), speed(r.get("tvm-tuned-retimed", r.get("tvm-tuned")))
    info = (r.get("tuning") or {}).get("baseline") or {}
    cs = lambda run: (r.get(run) or {}).get("cost", {}).get("compile_s")
    fmt = lambda x, d=2: f"{x:.{d}f}" if isinstance(x, (int, float)) else "-"
    note = "" if info.get("tuned") else info.get("note", "")
    for run in ("tvm", "tvm-tuned"):
        if r.get(run) and not r[run].get("correct"):
            note += f" [{run}: {r[run].get('error')}: {(r[run].get('message') or '')[:80]}]"
    print(f"{w:<48} {fmt(tvm):>7} {fmt(tuned):>8} {str(info.get('tuned', '-')):<7} {fmt(cs('tvm')):>7}"
          f" {fmt(cs('tvm-cached')):>7} {fmt(cs('tvm-tuned'), 1):>8} {fmt(cs('tvm-tuned-cached')):>8}  {note.strip()[:110]}")
    rows.append((w.split(".")[0], tvm, tuned, info.get("tuned")))
both = [(d, a, b, t) for d, a, b, t in rows if a and b]
print(f"\n{len(rows)} workloads; {len(both)} with TVM default and TVM tuned both correct and timed; "
      f"{sum(1 for *_, t in rows if t)} tuned (the rest kept the untuned translation)")
print(f"geomean speedup over native default: native 1.00x, TVM default {geo([a for _, a, _, _ in both]):.2f}x, "
      f"TVM tuned {geo([b for _, _, b, _ in both]):.2f}x")
tuned_only = [(a, b) for _, a, b, t in both if t]
if tuned_only:
    print(f"  over the {len(tuned_only)} tuned workloads only: TVM default {geo([a for a, _ in tuned_only]):.2f}x, "
          f"TVM tuned {geo([b for _, b in tuned_only]):.2f}x")
by = collections.defaultdict(list)
for d, a, b, t in both:
    by[d].append((a, b))
for d in sorted(by):
    xs = by[d]
    print(f"  {d:<12} {len(xs):3d} workloads: TVM default {geo([a for a, _ in xs]):6.2f}x, TVM tuned {geo([b for _, b in xs]):6.2f}x")
def med(run):
    xs = [r[run]["cost"]["compile_s"] for r in runs.values() if r.get(run) and r[run].get("cost")]
    return f"median {st.median(xs):.2f} s, max {max(xs):.2f} s (n={len(xs)})" if xs else "-"
for run, label in (("tvm", "TVM default, cold"), ("tvm-cached", "TVM default, cached"),
                   ("tvm-tuned", "TVM tuned, cold (tuning included)"), ("tvm-tuned-cached", "TVM tuned, cached")):
    print(f"compile time per workload, {label}: {med(run)}")
PY
}

if [[ "${1:-}" == side-by-side-report ]]; then
  side_by_side_report "$2"
  exit 0
fi

if [[ "${1:-}" == side-by-side-workload ]]; then  # WORKLOAD TRIALS BUILD OUT: one workload's runs
  w="$2" trials="$3" ekb="$4/ekb" out="$5"
  export EKB_CACHE_DIR="$out/cache"
  tag="${w//\//+}"
  each() {  # RUN ARGS...: one ekb eval of workload w, its results in $out/$tag@RUN.json
    local run="$1"
    shift
    [[ -s "$out/$tag@$run.json" ]] && return 0
    "$ekb" eval "$@" --db "$out/bench.db" --run "$tag@$run" --json "$out/$tag@$run.json" "$w" \
      > "$out/$tag@$run.log" 2>&1 || echo "   $w $run: ekb failed (see $out/$tag@$run.log)"
  }
  if [[ "${EKB_BENCH_RETIME:-}" == 1 ]]; then  # timed again, the compiles (and tuning records) cached
    [[ -s "$out/$tag@tvm-tuned.json" ]] || exit 0  # not benchmarked yet: nothing to re-time
    each tvm-retimed -s tvm
    each tvm-tuned-retimed -s tvm-tuned --tune-trials "$trials"
    exit 0
  fi
  each tvm -s tvm
  each tvm-cached -s tvm --no-timing
  each tvm-tuned -s tvm-tuned --tune-trials "$trials"
  each tvm-tuned-cached -s tvm-tuned --tune-trials "$trials" --no-timing
  each tuning -s native --baseline tvm-tuned --tune-trials "$trials" --no-timing
  exit 0
fi

if [[ "${1:-}" == side-by-side ]]; then
  n="${2:-30}"
  trials="${3:-64}"
  build="${4:-build}"
  ekb="$build/ekb"
  wrap=(${EKB_BENCH_WRAP:-})
  out="${EKB_BENCH_OUT:-$(mktemp -d)}"
  mkdir -p "$out"
  # Every (total/N)-th workload in list order, then taken domain by domain in turn, so that a
  # benchmark cut short has still reached every domain.
  mapfile -t names < <("$ekb" list --json | python3 -c "
import json, sys, collections
ws = [w['name'] for w in json.load(sys.stdin)]
n = min(int('$n'), len(ws))
by = collections.defaultdict(list)
for w in (ws[int(k * len(ws) / n)] for k in range(n)):
    by[w.split('.')[0]].append(w)
order = []
while any(by.values()):
    for d in sorted(by):
        if by[d]:
            order.append(by[d].pop(0))
print('\n'.join(order))")
  if [[ "${EKB_BENCH_GEMM:-}" == 1 ]]; then names+=(linalg.gemm/square_1024); fi
  echo "== side by side: ${#names[@]} workloads, $trials trials, results in $out ($(uptime))"
  for w in "${names[@]}"; do
    # One workload's six commands at a time under the wrapper (a lock is released in between).
    "${wrap[@]}" bash "$self" side-by-side-workload "$w" "$trials" "$build" "$out"
    echo "   $(date +%T) $w done"
  done
  if [[ "${EKB_BENCH_GEMM:-}" == 1 && -x "$build/ekb_cpu_vendor" ]]; then
    "${wrap[@]}" env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE "$build/ekb_cpu_vendor" linalg.gemm/square_1024 \
      > "$out/openblas.jsonl" 2>&1 || true
    python3 - "$out" <<'PY'
import json, sys
out = sys.argv[1]
lines = [json.loads(l) for l in open(f"{out}/openblas.jsonl") if l.startswith("{")]
blas = [l for l in lines if l.get("workload") == "linalg.gemm/square_1024"]
tuned = json.load(open(f"{out}/linalg.gemm+square_1024@tvm-tuned.json"))["results"][0]
core = [l for l in lines if "openblas_core" in l]
print("linalg.gemm/square_1024 (cold calls, median ms):",
      f"native default {tuned['baseline_ms']['median']:.1f}," if tuned.get("baseline_ms") else "",
      f"TVM tuned {tuned['time_ms']['median']:.1f}," if tuned.get("time_ms") else "TVM tuned: not timed,",
      f"OpenBLAS {blas[0]['time_ms']['median']:.1f}" if blas and "time_ms" in blas[0] else f"OpenBLAS: {blas or lines}",
      f"({core[0]['openblas_core']} kernel)" if core else "")
PY
  fi
  if [[ "${EKB_BENCH_EXAMPLES:-}" == 1 ]]; then
    # The hand-written schedules (examples/schedules-cpu, bench/cpu_schedules.sh's workloads) timed
    # against TVM tuned at the same trials: TVM tuned is the baseline, so speedup > 1 is ours ahead.
    mapfile -t ex < <(EKB_SCHEDULES_LIST=1 bash bench/cpu_schedules.sh)
    [[ -s "$out/examples@vs-tvm-tuned.json" ]] || EKB_CACHE_DIR="$out/cache" "${wrap[@]}" "$ekb" eval \
      -s examples/schedules-cpu --baseline tvm-tuned --tune-trials "$trials" --db "$out/bench.db" \
      --run examples@vs-tvm-tuned --json "$out/examples@vs-tvm-tuned.json" "${ex[@]}" \
      > "$out/examples@vs-tvm-tuned.log" 2>&1 || echo "   examples: ekb failed (see $out/examples@vs-tvm-tuned.log)"
    python3 - "$out/examples@vs-tvm-tuned.json" <<'PY'
import json, math, sys
rows = json.load(open(sys.argv[1]))["results"]
print("\nexamples/schedules-cpu against TVM tuned (speedup of the hand schedule over TVM tuned):")
ok = []
for r in rows:
    b = r.get("baseline") or {}
    what = f"{r['speedup']:.2f}x" if r.get("correct") and r.get("speedup") else (r.get("error") or "-")
    print(f"  {r['workload']:<48} {what:>8}  {'tuned' if b.get('tuned') else 'untuned: ' + (b.get('note') or '')[:60]}")
    if r.get("correct") and r.get("speedup"):
        ok.append(r["speedup"])
if ok:
    print(f"  geomean over {len(ok)}: {math.exp(sum(map(math.log, ok)) / len(ok)):.2f}x")
PY
  fi
  side_by_side_report "$out"
  exit 0
fi

n="${1:-100}"
ekb="${2:-build}/ekb"
backend="${3:-cpu}"
shards="${EKB_BENCH_SHARDS:-1}"
passes=(${EKB_BENCH_RUNS:-tvm-cold tvm-warm native-cold})
if [[ -n "${EKB_BENCH_OUT:-}" ]]; then
  work="$EKB_BENCH_OUT"
  mkdir -p "$work"
else
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
fi
export EKB_CACHE_DIR="$work/cache"

mapfile -t names < <("$ekb" list --json | python3 -c "
import json, sys
ws = [w['name'] for w in json.load(sys.stdin)]
n = len(ws) if '$n' == 'all' else min(int('$n'), len(ws))
print('\n'.join(ws[int(k * len(ws) / n)] for k in range(n)))")
for run in "${passes[@]}"; do
  solutions="${run%%-*}"
  start=$(date +%s.%N)
  for ((s = 0; s < shards; s++)); do  # shard s: every shards-th workload from the s-th
    slice=()
    for ((i = s; i < ${#names[@]}; i += shards)); do slice+=("${names[i]}"); done
    "$ekb" eval -s "$solutions" -b "$backend" --no-timing --db "$work/$run.$s.db" --run "$run-$s" \
      --json "$work/$run.$s.json" "${slice[@]}" > "$work/$run.$s.log" 2>&1 || true &
  done
  wait
  end=$(date +%s.%N)
  echo "== $run ($backend): ${#names[@]} workloads in $(python3 -c "print(f'{$end - $start:.0f}')") s ($shards at a time)"
done
python3 - "$work" "${passes[@]}" <<'PY'
import json, sys, collections, statistics as st, glob
work = sys.argv[1]
def load(run):
    rs = {}
    for path in sorted(glob.glob(f"{work}/{run}.*.json")):
        rs.update({r["workload"]: r for r in json.load(open(path))["results"]})
    return rs
cold, warm, native = (load(run) if run in sys.argv[2:] else {} for run in ("tvm-cold", "tvm-warm", "native-cold"))
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
