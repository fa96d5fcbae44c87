// Baseline for nn.softmax: three passes per row (max, sum of exponentials, normalise).
#include <math.h>
void ekb_main(const float* x, float* y, int64_t R, int64_t C) {
  for (int64_t r = 0; r < R; ++r) {
    const float* xr = x + r * C;
    float m = xr[0];
    for (int64_t c = 1; c < C; ++c) m = xr[c] > m ? xr[c] : m;
    float s = 0.0f;
    for (int64_t c = 0; c < C; ++c) s += expf(xr[c] - m);
    for (int64_t c = 0; c < C; ++c) y[r * C + c] = expf(xr[c] - m) / s;
  }
}
