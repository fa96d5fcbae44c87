#!/usr/bin/env bash
# Configures and builds into build/ (Release with debug info), then the cross targets' ekb-device.
# Extra arguments go to the host's cmake.
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@" >/dev/null
cmake --build build --parallel "$(nproc)"
# The device worker for each cross target (docs/DEVICES.md): the tests run cross-compiled kernels
# under qemu-user with them.
for triple in aarch64-linux-gnu riscv64-linux-gnu; do
  scripts/build-device.sh "$triple" > /dev/null
done
