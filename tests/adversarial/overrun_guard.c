// workload: nn.relu6/mbv2_035_96_48x48x48
// expect: out_of_bounds
// Correct, but writes 4 KiB past the end of its output (into the guard gap).
void ekb_main(const float* x, float* y, int64_t N, int64_t H, int64_t W, int64_t C) {
  int64_t n = N * H * W * C;
  for (int64_t i = 0; i < n; ++i) y[i] = x[i] < 0 ? 0 : (x[i] > 6 ? 6 : x[i]);
  ((volatile float*)y)[n + 1024] = 1.0f;
}
