#!/usr/bin/env bash
# Throughput of the shared PostgreSQL results store (docs/SCALE_OUT.md) under concurrent writers:
# W processes, each storing its own results into one run as `ekb eval --shard` does (one
# autocommitted INSERT ... ON CONFLICT DO NOTHING per result), against a server the benchmark
# starts (tests/postgres_server.h: a unix socket; `postgres-fsync` flushes each commit as a
# production server does, `postgres` runs with fsync off as the tests do). Prints results per
# second, the median of 5 repetitions, for each writer count; the SQLite file (synchronous=FULL)
# under the same load for comparison.
# Usage: bench/store_throughput.sh [build dir]   ($EKB_BENCH_WRITERS: default "8 32"; $EKB_BENCH_RESULTS: per writer, default 200)
set -euo pipefail
cd "$(dirname "$0")/.."
tests="${1:-build}/tests/ekb_tests"
for writers in ${EKB_BENCH_WRITERS:-8 32}; do
  for engine in postgres-fsync postgres sqlite; do
    rates=()
    for rep in 1 2 3 4 5; do
      out=$(EKB_BENCH_WRITERS="$writers" EKB_BENCH_ENGINE="$engine" EKB_BENCH_RESULTS="${EKB_BENCH_RESULTS:-200}" \
            "$tests" --gtest_also_run_disabled_tests --gtest_filter='StoreThroughput.DISABLED_ConcurrentWriters' 2>&1)
      rate=$(sed -n 's/.*results_per_second=\([0-9.]*\).*/\1/p' <<<"$out")
      [ -n "$rate" ] || { echo "$out" >&2; exit 1; }
      rates+=("$rate")
    done
    printf '%-14s %3d writers: %s results/s (median of 5: %s)\n' "$engine" "$writers" \
      "$(printf '%s\n' "${rates[@]}" | sort -g | sed -n 3p)" "${rates[*]}"
  done
done
