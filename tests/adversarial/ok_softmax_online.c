// workload: nn.softmax/mbert_128x512
// expect: none
// Fused passes: running max and rescaled sum in one sweep (online softmax), then one normalising
// sweep with a multiplication by the reciprocal.
#include <math.h>
void ekb_main(const float* x, float* y, int64_t R, int64_t C) {
  for (int64_t r = 0; r < R; ++r) {
    const float* xr = x + r * C;
    float m = -INFINITY, s = 0.0f;
    for (int64_t c = 0; c < C; ++c) {
      float v = xr[c];
      if (v > m) {
        s = s * expf(m - v) + 1.0f;
        m = v;
      } else {
        s += expf(v - m);
      }
    }
    float inv = 1.0f / s;
    for (int64_t c = 0; c < C; ++c) y[r * C + c] = expf(xr[c] - m) * inv;
  }
}
