/* BROKEN on purpose (expected: crash): indexes the history with a sign error and reads far before
 * the input buffer. */
void ekb_main(const float* x, const float* h, float* y, int64_t N, int64_t K) {
  for (int64_t n = 0; n < N; ++n) {
    float acc = 0.0f;
    for (int64_t k = 0; k < K; ++k) acc += h[k] * x[n - k * 4096 * 64];
    y[n] = acc;
  }
}
