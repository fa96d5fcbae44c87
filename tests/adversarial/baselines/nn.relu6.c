// Baseline for nn.relu6: the straightforward loop (until the native compiler's C lands).
void ekb_main(const float* x, float* y, int64_t N, int64_t H, int64_t W, int64_t C) {
  int64_t n = N * H * W * C;
  for (int64_t i = 0; i < n; ++i) {
    float v = x[i] < 0.0f ? 0.0f : x[i];
    y[i] = v > 6.0f ? 6.0f : v;
  }
}
