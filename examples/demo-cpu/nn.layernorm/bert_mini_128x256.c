/* BROKEN on purpose (expected: mismatch): normalizes by the root mean square instead of the
 * standard deviation (forgets to subtract the mean). */
#include <math.h>
void ekb_main(const float* x, const float* gamma, const float* beta, float* y, int64_t R, int64_t C) {
  for (int64_t r = 0; r < R; ++r) {
    float ss = 0.0f;
    for (int64_t c = 0; c < C; ++c) ss += x[r * C + c] * x[r * C + c];
    float inv = 1.0f / sqrtf(ss / (float)C + 1e-5f);
    for (int64_t c = 0; c < C; ++c) y[r * C + c] = x[r * C + c] * inv * gamma[c] + beta[c];
  }
}
