// workload: nn.relu6/mbv2_035_96_48x48x48
// expect: mismatch
// A constant near the output's mean: the rms-scaled tolerance must not let it through.
void ekb_main(const float* x, float* y, int64_t N, int64_t H, int64_t W, int64_t C) {
  for (int64_t i = 0; i < N * H * W * C; ++i) y[i] = 2.25f;
}
