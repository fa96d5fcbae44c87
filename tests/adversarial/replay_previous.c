// workload: nn.relu6/mbv2_035_96_48x48x48
// expect: mismatch
// Keeps its last answer in a static buffer and replays it whenever it is called with the same
// pointers again (the harness reuses one arena, so only the inputs change).
static float saved[1 << 20];
static const float* last_x;
void ekb_main(const float* x, float* y, int64_t N, int64_t H, int64_t W, int64_t C) {
  int64_t n = N * H * W * C;
  if (x == last_x) {
    memcpy(y, saved, (size_t)n * sizeof(float));
    return;
  }
  for (int64_t i = 0; i < n; ++i) y[i] = x[i] < 0 ? 0 : (x[i] > 6 ? 6 : x[i]);
  memcpy(saved, y, (size_t)n * sizeof(float));
  last_x = x;
}
