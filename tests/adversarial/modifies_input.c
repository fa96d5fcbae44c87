// workload: nn.relu6/mbv2_035_96_48x48x48
// expect: input_modified
// Computes the right answer in place in its input, then copies it out.
void ekb_main(const float* x, float* y, int64_t N, int64_t H, int64_t W, int64_t C) {
  float* xm = (float*)x;
  for (int64_t i = 0; i < N * H * W * C; ++i) {
    xm[i] = xm[i] < 0 ? 0 : (xm[i] > 6 ? 6 : xm[i]);
    y[i] = xm[i];
  }
}
