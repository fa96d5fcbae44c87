#!/usr/bin/env bash
# The native compiler's OpenCL for EVERY suite workload, correct on an OpenCL platform: `ekb eval
# --backend opencl -s native --no-timing` (built by the device's compiler, run in sandboxed workers,
# checked against the reference on random and edge inputs). Prints how many passed, the failures,
# and how long it took; CI runs every 16th workload as tests/codegen/opencl_suite_test.cpp.
# Usage: bench/opencl_suite.sh [platform substring, default: the first with a device] [build dir]
set -euo pipefail
cd "$(dirname "$0")/.."
platform="${1:-}"
ekb="${2:-build}/ekb"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export EKB_CACHE_DIR="$work/cache"
args=(eval --backend opencl -s native --no-timing --call-timeout 60 --db "$work/suite.db" --json "$work/suite.json")
[ -n "$platform" ] && args+=(--platform "$platform")
start=$(date +%s.%N)
"$ekb" "${args[@]}" > "$work/suite.log" 2>&1 || true
end=$(date +%s.%N)
python3 - "$work/suite.json" "$start" "$end" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
rs = doc["results"]
ok = [r for r in rs if r["correct"]]
print(f"device: {doc['device']['name']}")
print(f"{len(ok)}/{len(rs)} workloads correct in {float(sys.argv[3]) - float(sys.argv[2]):.0f} s")
failed = [r for r in rs if not r["correct"]]
kinds = {}
for r in failed:
    kinds[r["error"]] = kinds.get(r["error"], 0) + 1
if kinds:
    print("failures by kind: " + ", ".join(f"{k} {n}" for k, n in sorted(kinds.items())))
for r in failed[:40]:
    msg = (r.get("message") or "").splitlines()
    print(f"  FAIL {r['workload']}: {r['error']}: {msg[0][:200] if msg else ''}")
PY
