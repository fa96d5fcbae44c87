// workload: linalg.gemm/small
// expect: out_of_bounds
// Correct, but also writes the element before the start of C.
void ekb_main(const float* C_in, const float* A, const float* B, float* C,
              int64_t NI, int64_t NJ, int64_t NK) {
  for (int64_t i = 0; i < NI; ++i)
    for (int64_t j = 0; j < NJ; ++j) {
      float acc = 0.0f;
      for (int64_t k = 0; k < NK; ++k) acc += 1.5f * A[i * NK + k] * B[k * NJ + j];
      C[i * NJ + j] = 1.2f * C_in[i * NJ + j] + acc;
    }
  ((volatile float*)C)[-1] = 0.0f;
}
