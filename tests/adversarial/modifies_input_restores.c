// workload: nn.relu6/mbv2_035_96_48x48x48
// expect: input_modified
// Uses its input as scratch and restores it before returning: still not allowed (inputs are
// read-only: they may be shared with other work while the kernel runs).
void ekb_main(const float* x, float* y, int64_t N, int64_t H, int64_t W, int64_t C) {
  volatile float* xm = (volatile float*)x;
  float saved = xm[0];
  xm[0] = 0.0f;
  xm[0] = saved;
  for (int64_t i = 0; i < N * H * W * C; ++i) y[i] = x[i] < 0 ? 0 : (x[i] > 6 ? 6 : x[i]);
}
