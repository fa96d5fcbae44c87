/* Hand-optimized: one pass for the max, one for exp and the sum, one to scale; rows in parallel. */
#include <math.h>
void ekb_main(const float* x, float* y, int64_t R, int64_t C) {
#pragma omp parallel for schedule(static)
  for (int64_t r = 0; r < R; ++r) {
    const float* xr = x + r * C;
    float* yr = y + r * C;
    float m = -INFINITY;
    for (int64_t c = 0; c < C; ++c) m = xr[c] > m ? xr[c] : m;
    float s = 0.0f;
    for (int64_t c = 0; c < C; ++c) {
      yr[c] = expf(xr[c] - m);
      s += yr[c];
    }
    const float inv = 1.0f / s;
    for (int64_t c = 0; c < C; ++c) yr[c] *= inv;
  }
}
