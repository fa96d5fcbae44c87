#!/usr/bin/env bash
# Prepares what bench/gpu.sh needs carried to a GPU machine that cannot build ekb (the H200 image
# lacks SQLiteCpp, sqlite3.h and xxhash.h), and prints the device call that uses it:
#  - BUILD/ekb and BUILD/tests/ekb_tests, built here (this script does not build them: use a
#    Release build, e.g. cmake -B build-cuda -G Ninja -DCMAKE_BUILD_TYPE=Release && ninja -C
#    build-cuda ekb ekb_tests);
#  - BUILD/ekb_gpu_vendor, built here from bench/gpu_vendor.cu with nvcc for sm_90 (the H200) when
#    missing or older than its source ($EKB_GPU_ARCH picks another arch);
#  - .gpu-libs/: the shared libraries the binaries need beyond the C/C++ runtime (libfmt,
#    libsqlite3), found with ldd; ignored by git through .git/info/exclude.
# Checks that the binaries, the libraries and the working tree that travels with them fit in the
# 64 MiB a device call carries, and prints the `run` call's carry list and command.
#
# Usage: bench/gpu_carry.sh [build dir]   (default build-cuda)
set -euo pipefail
cd "$(dirname "$0")/.."
build="${1:-build-cuda}"
arch="${EKB_GPU_ARCH:-sm_90}"
limit=$((64 << 20))

for f in "$build/ekb" "$build/tests/ekb_tests"; do
  [ -x "$f" ] || { echo "missing $f: build it first (ninja -C $build ekb ekb_tests)"; exit 1; }
done

vendor="$build/ekb_gpu_vendor"
if [ ! -x "$vendor" ] || [ bench/gpu_vendor.cu -nt "$vendor" ]; then
  command -v nvcc > /dev/null || { echo "nvcc not found: cannot build $vendor"; exit 1; }
  echo "building $vendor for $arch (about a minute)"
  nvcc -O3 -std=c++17 -arch="$arch" -o "$vendor" bench/gpu_vendor.cu -ldl
fi

# Libraries outside the C/C++ runtime that every Linux image has (libresolv belongs to glibc: a
# newer one would need the newer libc's private symbols).
mkdir -p .gpu-libs
grep -qxF "/.gpu-libs/" .git/info/exclude 2>/dev/null || echo "/.gpu-libs/" >> .git/info/exclude
ldd "$build/ekb" "$build/tests/ekb_tests" "$vendor" | awk '$3 ~ /^\// {print $3}' | sort -u | while read -r lib; do
  case "$(basename "$lib")" in
    libc.so.*|libm.so.*|libstdc++.so.*|libgcc_s.so.*|libpthread.so.*|libdl.so.*|librt.so.*|libresolv.so.*|ld-linux*) ;;
    *) cp -L "$lib" .gpu-libs/ && echo "  .gpu-libs/$(basename "$lib")" ;;
  esac
done

# What travels: tracked files, untracked files git does not ignore, and the carried paths.
tree_bytes=$(git ls-files -z --cached --others --exclude-standard | xargs -0 stat -c %s 2>/dev/null \
  | awk '{s += $1} END {print s + 0}')
carry=("$build/ekb" "$build/tests/ekb_tests" "$vendor" .gpu-libs)
carry_bytes=$(du -cbL "${carry[@]}" | tail -1 | cut -f1)
total=$((tree_bytes + carry_bytes))
awk -v t="$tree_bytes" -v c="$carry_bytes" 'BEGIN {
  printf "working tree %.1f MiB + carried %.1f MiB = %.1f MiB (limit 64 MiB)\n", t / 1048576, c / 1048576, (t + c) / 1048576 }'
[ "$total" -le "$limit" ] || { echo "over the limit: strip the binaries (strip --strip-debug) or carry less"; exit 1; }

printf 'carry: ['; printf '"%s", ' "${carry[@]}" | sed 's/, $//'; printf ']\n'
echo "command: export LD_LIBRARY_PATH=\$PWD/.gpu-libs; bash bench/gpu.sh all $build 2>&1 | tee \$OUT/gpu.log"
