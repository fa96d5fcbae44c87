// workload: linalg.gemm/small
// expect: none
// C++, OpenMP over rows, a blocked k loop.
#include <algorithm>
extern "C" void ekb_main(const float* C_in, const float* A, const float* B, float* C,
                         int64_t NI, int64_t NJ, int64_t NK) {
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < NI; ++i) {
    float* c = C + i * NJ;
    for (int64_t j = 0; j < NJ; ++j) c[j] = 1.2f * C_in[i * NJ + j];
    for (int64_t k0 = 0; k0 < NK; k0 += 16)
      for (int64_t k = k0; k < std::min(NK, k0 + 16); ++k) {
        const float a = 1.5f * A[i * NK + k];
#pragma omp simd
        for (int64_t j = 0; j < NJ; ++j) c[j] += a * B[k * NJ + j];
      }
  }
}
