#!/usr/bin/env bash
# Builds ekb-device (docs/DEVICES.md) for TRIPLE into build-TRIPLE/ and prints its path:
#   scripts/build-device.sh aarch64-linux-gnu | riscv64-linux-gnu   (cross: cmake/toolchains/TRIPLE.cmake)
#   scripts/build-device.sh host                                     (this machine, the same options)
# Builds every target that configures (ekb-device, its layers and their link checks).
# Ninja, Release, EKB_DEVICE_ONLY (no SQLite, curl, toml++, OpenSSL; libstdc++ linked in). Extra
# arguments go to cmake. $EKB_JOBS: parallel jobs (default: nproc).
set -euo pipefail
cd "$(dirname "$0")/.."
if (($# < 1)); then
  echo "usage: scripts/build-device.sh TRIPLE [cmake arguments...]; TRIPLE: host or one of:" >&2
  ls cmake/toolchains | grep -v '^linux-gnu-clang' | sed 's/\.cmake$//; s/^/  /' >&2
  exit 2
fi
triple=$1
shift
toolchain=()
if [[ $triple != host ]]; then
  file=cmake/toolchains/$triple.cmake
  [[ -f $file ]] || { echo "build-device: no toolchain file $file" >&2; exit 2; }
  toolchain=(-DCMAKE_TOOLCHAIN_FILE="$PWD/$file")
fi
dir=build-$triple
cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DEKB_DEVICE_ONLY=ON "${toolchain[@]}" "$@" >/dev/null
cmake --build "$dir" --parallel "${EKB_JOBS:-$(nproc)}" >&2
echo "$PWD/$dir/ekb-device"
