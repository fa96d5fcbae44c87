#!/usr/bin/env bash
# A sharded run on one machine (docs/SCALE_OUT.md): 200 workloads spread over the suite, the native
# default lowering checked for correctness (--no-timing), as 1, 2, 3 and 4 shards running at once
# into one PostgreSQL store (started here, as in the tests). A first unsharded pass fills the
# compile and reference caches, so the passes measured compare sharding, not compiling. Prints each
# pass's wall time, its speedup over 1 shard and the overhead per shard (what a shard spends beyond
# its share of the 1-shard time). On 2 cores expect little gain: the shards compete for the CPU.
# Usage: bench/shard_scaling.sh [N workloads, default 200] [build dir]
set -euo pipefail
cd "$(dirname "$0")/.."
n="${1:-200}"
build="${2:-build}"
ekb="$build/ekb"
work=$(mktemp -d)
export EKB_CACHE_DIR="$work/cache"
# The store: a PostgreSQL server of its own, as tests/postgres_server.h starts one (as `nobody`
# under root, which postgres refuses; a unix socket in $work, no TCP listener).
pgbin=/usr/lib/postgresql/15/bin
as_nobody=()
[ "$(id -u)" -eq 0 ] && as_nobody=(setpriv --reuid=65534 --regid=65534 --clear-groups)
chmod 755 "$work"
mkdir -p "$work/pg/data" "$work/pg/sockets"
[ "$(id -u)" -eq 0 ] && chown -R 65534:65534 "$work/pg"
"${as_nobody[@]}" "$pgbin/initdb" -D "$work/pg/data" -U ekb --auth=trust -E UTF8 --no-sync > /dev/null
"${as_nobody[@]}" "$pgbin/pg_ctl" -D "$work/pg/data" -l "$work/pg/log" -w \
  -o "-k $work/pg/sockets -p 5432 -c listen_addresses= -c fsync=off" start > /dev/null
trap '"${as_nobody[@]}" "$pgbin/pg_ctl" -D "$work/pg/data" -m fast stop > /dev/null; rm -rf "$work"' EXIT
db="postgresql://ekb@/postgres?host=$work/pg/sockets&port=5432"

mapfile -t names < <("$ekb" list --json | python3 -c "
import json, sys
ws = [w['name'] for w in json.load(sys.stdin)]
n = min(int('$n'), len(ws))
print('\n'.join(ws[int(k * len(ws) / n)] for k in range(n)))")
echo "== ${#names[@]} workloads, native --no-timing; caches filled by a first pass"
"$ekb" eval -s native --no-timing --db "$db" --run warmup "${names[@]}" > "$work/warmup.log" 2>&1 || true
base=""
for shards in 1 2 3 4; do
  start=$(date +%s.%N)
  pids=()
  for ((i = 0; i < shards; i++)); do
    "$ekb" eval -s native --no-timing --db "$db" --run "shards-$shards" --json "$work/s$shards.json" \
      --shard "$i/$shards" "${names[@]}" > "$work/s$shards-$i.log" 2>&1 &
    pids+=($!)
  done
  for p in "${pids[@]}"; do wait "$p" || true; done
  end=$(date +%s.%N)
  python3 - "$shards" "$start" "$end" "${base:-0}" <<'PY'
import sys
shards, start, end, base = int(sys.argv[1]), float(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4])
wall = end - start
base = base or wall
# Overhead per shard: the shards' combined time beyond the 1-shard run, shared among them.
overhead = (wall * shards - base) / shards if shards > 1 else 0.0
print(f"{shards} shard(s): {wall:7.1f} s  speedup {base / wall:4.2f}x  overhead per shard {overhead:6.1f} s")
PY
  [ -n "$base" ] || base=$(python3 -c "print($end - $start)")
done
"$ekb" runs --db "$db" | head -6
