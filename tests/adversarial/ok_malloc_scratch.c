// workload: nn.softmax/mbert_128x512
// expect: none
// Allocates its scratch with malloc on every call instead of declaring it (docs/ABI.md, "Scratch
// memory": allowed; the allocation is timed with the call, and freed before returning).
#include <math.h>
#include <stdlib.h>
void ekb_main(const float* x, float* y, int64_t R, int64_t C) {
  float* e = (float*)malloc((size_t)C * sizeof(float));
  for (int64_t r = 0; r < R; ++r) {
    const float* xr = x + r * C;
    float m = xr[0];
    for (int64_t c = 1; c < C; ++c) m = xr[c] > m ? xr[c] : m;
    float s = 0.0f;
    for (int64_t c = 0; c < C; ++c) s += (e[c] = expf(xr[c] - m));
    for (int64_t c = 0; c < C; ++c) y[r * C + c] = e[c] / s;
  }
  free(e);
}
