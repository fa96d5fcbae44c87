#!/usr/bin/env bash
# The whole test suite: installs what is missing, builds, runs every test with ctest, then fuzzes
# the parser briefly. This is what CI runs (.ci/run).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh
scripts/fuzz.sh "${EKB_FUZZ_SECONDS:-30}"
cd build
ctest --output-on-failure --timeout 600 -j "$(nproc)"
