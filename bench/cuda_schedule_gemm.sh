#!/usr/bin/env bash
# The hand-written CUDA schedule of linalg.gemm (examples/schedules-cuda/linalg.gemm/all.ekb)
# against cuBLAS SGEMM (FP32, no TF32) on a GPU machine, at 4096^3 and at the suite's sizes.
#   here:        bench/cuda_schedule_gemm.sh emit BUILD_DIR   (writes build-cuda-gemm/gemm_*.cu)
#   GPU machine: bench/cuda_schedule_gemm.sh run              (nvcc, then one line per size)
# `emit` needs ekb; `run` needs only nvcc and cuBLAS (carry build-cuda-gemm).
set -euo pipefail
cd "$(dirname "$0")/.."
dir=build-cuda-gemm  # ignored by git (build-*/)
sizes="sgemm_4096:4096:4096:4096 square_1024:1024:1024:1024 medium:200:220:240"
case "${1:-}" in
  emit)
    ekb="${2:-build}/ekb"
    mkdir -p "$dir" && suite=$(mktemp -d) && mkdir -p "$suite/linalg"
    cp suite/linalg/gemm.ekb "$suite/linalg/"
    echo 'workload sgemm_4096 mobile { NI = 4096, NJ = 4096, NK = 4096, T = f32 }' >>"$suite/linalg/gemm.ekb"
    for s in $sizes; do
      w=${s%%:*}
      "$ekb" --suite "$suite" emit "linalg.gemm/$w" --backend cuda \
        --schedule examples/schedules-cuda/linalg.gemm/all.ekb >"$dir/gemm_$w.cu"
    done
    rm -r "$suite" ;;
  run)
    status=0
    for s in $sizes; do
      IFS=: read -r w ni nj nk <<<"$s"
      nvcc -O3 -arch=sm_90 -Xptxas -v -o "$dir/gemm_$w" bench/cuda_schedule_gemm.cu "$dir/gemm_$w.cu" -lcublas \
        2>&1 | grep -E "registers|spill" | sed "s/^/$w: /" || true
      "$dir/gemm_$w" "$ni" "$nj" "$nk" || status=1
    done
    exit $status ;;
  *) echo "usage: $0 emit BUILD_DIR | run" >&2; exit 2 ;;
esac
