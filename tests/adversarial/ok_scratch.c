// workload: nn.softmax/mbert_128x512
// expect: none
// Declares scratch memory (docs/ABI.md) and keeps the row's exponentials there.
#include <math.h>
int64_t ekb_scratch_bytes(int64_t R, int64_t C) { return C * (int64_t)sizeof(float); }
void ekb_main(const float* x, float* y, int64_t R, int64_t C, void* scratch) {
  float* e = (float*)scratch;
  for (int64_t r = 0; r < R; ++r) {
    const float* xr = x + r * C;
    float m = xr[0];
    for (int64_t c = 1; c < C; ++c) m = xr[c] > m ? xr[c] : m;
    float s = 0.0f;
    for (int64_t c = 0; c < C; ++c) s += (e[c] = expf(xr[c] - m));
    for (int64_t c = 0; c < C; ++c) y[r * C + c] = e[c] / s;
  }
}
