#!/usr/bin/env bash
# Fresh machine to first result: installs what is missing, builds, and runs the main job on the
# embedded default: the labelled demo solution set (examples/demo-cpu) evaluated on the cpu
# backend against the native baseline, then its report, also as an HTML page (its path printed last).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh
mkdir -p build/results
build/ekb eval --backend cpu --solutions examples/demo-cpu --solved-only \
  --db build/results/demo.db --json build/results/demo.json
build/ekb report --db build/results/demo.db last --html build/results/demo.html > /dev/null
echo "HTML report: $(pwd)/build/results/demo.html"
