#!/usr/bin/env bash
# Fresh machine to first result: installs what is missing, builds, and runs the main job on the
# embedded default suite.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh
echo
echo "== ekb list --size micro (the embedded suite's MCU-sized workloads)"
build/ekb list --size micro
echo
echo "== ekb show graph.kws_dscnn/kws_49x10x1"
build/ekb show graph.kws_dscnn/kws_49x10x1
