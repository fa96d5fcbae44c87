// workload: nn.relu6/mbv2_035_96_48x48x48
// expect: none
// OpenMP threads and vectorized min/max.
#include <math.h>
void ekb_main(const float* x, float* y, int64_t N, int64_t H, int64_t W, int64_t C) {
  int64_t n = N * H * W * C;
#pragma omp parallel for simd schedule(static)
  for (int64_t i = 0; i < n; ++i) y[i] = fminf(fmaxf(x[i], 0.0f), 6.0f);
}
