// workload: nn.relu6/mbv2_035_96_48x48x48
// expect: memory
// Allocates 1 TiB (behind the harness's back, too) and uses it without checking for NULL.
#include <stdlib.h>
void ekb_main(const float* x, float* y, int64_t N, int64_t H, int64_t W, int64_t C) {
  float* volatile big = (float*)malloc((size_t)1 << 40);  /* volatile: the optimizer may not drop it */
  big[12345] = x[0];
  for (int64_t i = 0; i < N * H * W * C; ++i) y[i] = x[i] < 0 ? 0 : (x[i] > 6 ? 6 : x[i]);
}
