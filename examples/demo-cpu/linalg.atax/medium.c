/* BROKEN on purpose (expected: unwritten_output): an off-by-one bound leaves y[N-1] unwritten. */
void ekb_main(const float* A, const float* x, float* y, int64_t M, int64_t N) {
  for (int64_t j = 0; j < N - 1; ++j) y[j] = 0.0f;
  for (int64_t i = 0; i < M; ++i) {
    float t = 0.0f;
    for (int64_t j = 0; j < N; ++j) t += A[i * N + j] * x[j];
    for (int64_t j = 0; j < N - 1; ++j) y[j] += A[i * N + j] * t;
  }
}
