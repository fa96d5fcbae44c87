// workload: linalg.gemm/small
// expect: none
// Four partial sums over k (a different association of the reduction) and alpha applied once.
void ekb_main(const float* C_in, const float* A, const float* B, float* C,
              int64_t NI, int64_t NJ, int64_t NK) {
  for (int64_t i = 0; i < NI; ++i)
    for (int64_t j = 0; j < NJ; ++j) {
      float s0 = 0, s1 = 0, s2 = 0, s3 = 0;
      int64_t k = 0;
      for (; k + 4 <= NK; k += 4) {
        s0 += A[i * NK + k] * B[k * NJ + j];
        s1 += A[i * NK + k + 1] * B[(k + 1) * NJ + j];
        s2 += A[i * NK + k + 2] * B[(k + 2) * NJ + j];
        s3 += A[i * NK + k + 3] * B[(k + 3) * NJ + j];
      }
      for (; k < NK; ++k) s0 += A[i * NK + k] * B[k * NJ + j];
      C[i * NJ + j] = 1.2f * C_in[i * NJ + j] + 1.5f * ((s0 + s1) + (s2 + s3));
    }
}
