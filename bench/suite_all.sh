#!/usr/bin/env bash
# The whole suite through the native compiler's default lowering, checked against the reference
# on every backend asked for (default: cpu and opencl on PoCL): `ekb eval -s native`, correctness
# only unless --timing, one shard per domain (a shard that crashes or times out costs only its
# domain; each shard's run resumes if re-run with the same --work directory). Prints, per backend,
# the workloads correct of the total, the failures, and the wall time of each shard and in all.
# CI runs a stratified subset instead (tests/codegen/native_suite_test.cpp: every workload on cpu;
# tests/codegen/opencl_suite_test.cpp: suite::stratified_subset on PoCL).
#
# Usage: bench/suite_all.sh [--build DIR] [--backends cpu,opencl] [--platform pocl]
#                           [--timing] [--work DIR] [--domains nn,qnn,...] [-- extra ekb eval args]
set -euo pipefail
cd "$(dirname "$0")/.."
build=build
backends=cpu,opencl
platform=pocl
timing=0
work=""
domains=""
extra=()
while [ $# -gt 0 ]; do
  case "$1" in
    --build) build="$2"; shift 2 ;;
    --backends) backends="$2"; shift 2 ;;
    --platform) platform="$2"; shift 2 ;;
    --timing) timing=1; shift ;;
    --work) work="$2"; shift 2 ;;
    --domains) domains="$2"; shift 2 ;;
    --) shift; extra=("$@"); break ;;
    -h|--help) sed -n 2,12p "$0"; exit 0 ;;
    *) echo "suite_all.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
ekb="$build/ekb"
[ -x "$ekb" ] || { echo "suite_all.sh: $ekb not found (build first, or pass --build DIR)" >&2; exit 2; }
if [ -z "$work" ]; then
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
fi
mkdir -p "$work"
export EKB_CACHE_DIR="${EKB_CACHE_DIR:-$work/cache}"
# The suite's domains, from the binary's own suite (or $EKB_SUITE).
if [ -z "$domains" ]; then
  domains=$("$ekb" suite stats --json | python3 -c 'import json, sys; print(",".join(json.load(sys.stdin)["by_domain"]))')
fi

total_start=$(date +%s.%N)
for backend in ${backends//,/ }; do
  for domain in ${domains//,/ }; do
    args=(eval --backend "$backend" -s native --domain "$domain" --call-timeout 60
          --db "$work/$backend.db" --json "$work/$backend-$domain.json")
    [ "$backend" = opencl ] && [ -n "$platform" ] && args+=(--platform "$platform")
    [ "$timing" = 0 ] && args+=(--no-timing)
    start=$(date +%s.%N)
    # A failing workload makes ekb exit non-zero; the summary below reports it.
    "$ekb" "${args[@]}" "${extra[@]}" > "$work/$backend-$domain.log" 2>&1 || true
    end=$(date +%s.%N)
    echo "$backend $domain $start $end" >> "$work/shards.txt"
  done
done
total_end=$(date +%s.%N)

python3 - "$work" "$backends" "$domains" "$total_start" "$total_end" <<'PY'
import json, os, sys
work, backends, domains = sys.argv[1], sys.argv[2].split(","), sys.argv[3].split(",")
wall = {}
for line in open(os.path.join(work, "shards.txt")):
    b, d, s, e = line.split()
    wall[(b, d)] = float(e) - float(s)
status = 0
for b in backends:
    n = ok = 0
    failures, device = [], "?"
    print(f"== {b}")
    for d in domains:
        path = os.path.join(work, f"{b}-{d}.json")
        if not os.path.exists(path):
            log = open(os.path.join(work, f"{b}-{d}.log")).read().strip().splitlines()
            errors = [l for l in log if "error" in l] or log[-1:] or ["ekb printed nothing"]
            print(f"  {d:<12} no results: {errors[0].strip()}")
            status = 1
            continue
        doc = json.load(open(path))
        device = doc["device"]["name"]
        rs = doc["results"]
        good = sum(1 for r in rs if r["correct"])
        n += len(rs)
        ok += good
        failures += [r for r in rs if not r["correct"]]
        print(f"  {d:<12} {good:>4}/{len(rs):<4} correct  {wall[(b, d)]:7.0f} s")
    print(f"  {'all':<12} {ok:>4}/{n:<4} correct  {sum(v for (bb, _), v in wall.items() if bb == b):7.0f} s   device: {device}")
    for r in failures:
        msg = (r.get("message") or "").splitlines()
        print(f"    FAIL {r['workload']}: {r['error']}: {msg[0][:200] if msg else ''}")
    if failures or n == 0:
        status = 1
print(f"wall time: {float(sys.argv[5]) - float(sys.argv[4]):.0f} s")
sys.exit(status)
PY
