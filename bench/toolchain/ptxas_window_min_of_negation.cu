// A miscompilation by ptxas (CUDA 13.0.88, sm_90, default -O3) that made img.fast9_score's default
// lowering wrong on the H200 through CUDA and NVIDIA's OpenCL alike: the max over the 16 cyclic
// windows of 9 of the window's minimum of *negated* values
//     dark = max(s in 0..16: min(j in 0..9: -d[(s + j) % 16]))
// comes out wrong for most inputs, while the same loops without the negation, the identity
// dark = -min(s: max(j: d)), or the negated values read from memory are all right; so is every form
// with `-Xptxas -O0` or `-G` (measured on the H200, 2026-11-30: 8391 of 9216 wrong at -O3, 0 at
// -O0). The suite's pattern uses the identity (suite/img/fast9_score.ekb). bench/gpu.sh builds and
// runs this program, so a toolkit that fixes or reintroduces the bug shows up in its log.
// Build: nvcc -O3 -arch=sm_90 -o ptxas_check bench/toolchain/ptxas_window_min_of_negation.cu
// Exit status: 0 when both forms are right, 1 when the toolchain miscompiles the negated form,
// 2 when the identity is wrong too (or no GPU).
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <random>
#include <vector>

__device__ inline int32_t min_i32(int32_t a, int32_t b) { return b < a ? b : a; }
__device__ inline int32_t max_i32(int32_t a, int32_t b) { return a < b ? b : a; }

// The form ptxas gets wrong.
__global__ void dark_of_negation(const int32_t* d, int32_t* dark, int64_t n) {
  const int64_t p = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (p >= n) return;
  int32_t best = INT32_MIN;
  for (int64_t s = 0; s < 16; ++s) {
    int32_t window = INT32_MAX;
    for (int64_t j = 0; j < 9; ++j) window = min_i32(window, -d[p * 16 + ((s + j) & 15)]);
    best = max_i32(best, window);
  }
  dark[p] = best;
}

// The identity the suite uses.
__global__ void dark_by_identity(const int32_t* d, int32_t* dark, int64_t n) {
  const int64_t p = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (p >= n) return;
  int32_t least = INT32_MAX;
  for (int64_t s = 0; s < 16; ++s) {
    int32_t window = INT32_MIN;
    for (int64_t j = 0; j < 9; ++j) window = max_i32(window, d[p * 16 + ((s + j) & 15)]);
    least = min_i32(least, window);
  }
  dark[p] = -least;
}

int main() {
  const int64_t n = 9216;  // pixels of a 96x96 frame, 16 circle differences each, in [-255, 255]
  std::vector<int32_t> d(n * 16), want(n);
  std::mt19937 rng(1);
  for (int32_t& v : d) v = static_cast<int32_t>(rng() % 511) - 255;
  for (int64_t p = 0; p < n; ++p) {
    int32_t best = INT32_MIN;
    for (int s = 0; s < 16; ++s) {
      int32_t window = INT32_MAX;
      for (int j = 0; j < 9; ++j) window = std::min(window, -d[p * 16 + (s + j) % 16]);
      best = std::max(best, window);
    }
    want[p] = best;
  }
  int32_t *dd = nullptr, *dark = nullptr;
  if (cudaMalloc(&dd, n * 16 * 4) != cudaSuccess || cudaMalloc(&dark, n * 4) != cudaSuccess) {
    std::printf("ptxas check: no CUDA device\n");
    return 2;
  }
  cudaMemcpy(dd, d.data(), n * 16 * 4, cudaMemcpyHostToDevice);
  int wrong[2] = {0, 0};
  for (int form = 0; form < 2; ++form) {
    (form == 0 ? dark_of_negation : dark_by_identity)<<<(n + 255) / 256, 256>>>(dd, dark, n);
    std::vector<int32_t> got(n);
    cudaMemcpy(got.data(), dark, n * 4, cudaMemcpyDeviceToHost);
    for (int64_t p = 0; p < n; ++p) wrong[form] += got[p] != want[p];
  }
  std::printf("ptxas check: max of window minima of negated values: %d of %lld wrong; by the identity: %d wrong\n",
              wrong[0], static_cast<long long>(n), wrong[1]);
  return wrong[1] ? 2 : wrong[0] ? 1 : 0;
}
