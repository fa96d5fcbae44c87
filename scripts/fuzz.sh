#!/usr/bin/env bash
# Builds the libFuzzer target for the IR parser/verifier/printer with clang and runs it for N seconds
# (default 30), seeded with the suite and the malformed corpus. Any crash, hang, sanitizer report or
# round-trip mismatch fails.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-30}"
cmake -S fuzz -B build-fuzz -G Ninja -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build-fuzz --parallel "$(nproc)"
corpus=build-fuzz/corpus
mkdir -p "$corpus"
cp suite/*/*.ekb tests/data/malformed/*.ekb "$corpus"/ 2>/dev/null || true
echo "fuzz: running the parser fuzzer for ${seconds}s"
build-fuzz/ekb_parse_fuzz "$corpus" -max_total_time="$seconds" -max_len=8192 -timeout=10 \
  -rss_limit_mb=2048 -print_final_stats=1 2>build-fuzz/fuzz.log || { tail -50 build-fuzz/fuzz.log; exit 1; }
grep -E 'stat::number_of_executed_units|Done' build-fuzz/fuzz.log | tail -2
