/* Hand-optimized: sum of squares with a vectorizable reduction, rows in parallel. */
#include <math.h>
void ekb_main(const float* x, const float* w, float* y, int64_t S, int64_t D) {
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < S; ++i) {
    const float* xi = x + i * D;
    float ss = 0.0f;
#pragma omp simd reduction(+ : ss)
    for (int64_t d = 0; d < D; ++d) ss += xi[d] * xi[d];
    const float r = 1.0f / sqrtf(ss / (float)D + 1e-5f);
    for (int64_t d = 0; d < D; ++d) y[i * D + d] = xi[d] * r * w[d];
  }
}
