// workload: nn.relu6/mbv2_035_96_48x48x48
// expect: crash
// Closes every descriptor it can find (the worker's connection to the harness among them).
#include <unistd.h>
void ekb_main(const float* x, float* y, int64_t N, int64_t H, int64_t W, int64_t C) {
  for (int fd = 0; fd < 64; ++fd) close(fd);
  for (int64_t i = 0; i < N * H * W * C; ++i) y[i] = x[i] < 0 ? 0 : (x[i] > 6 ? 6 : x[i]);
}
