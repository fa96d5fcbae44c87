// workload: linalg.gemm/small
// expect: none
// Another loop order (i, k, j: unit stride over B and C), accumulating in the output.
void ekb_main(const float* C_in, const float* A, const float* B, float* C,
              int64_t NI, int64_t NJ, int64_t NK) {
  for (int64_t i = 0; i < NI; ++i) {
    float* c = C + i * NJ;
    for (int64_t j = 0; j < NJ; ++j) c[j] = 1.2f * C_in[i * NJ + j];
    for (int64_t k = 0; k < NK; ++k) {
      const float a = 1.5f * A[i * NK + k];
      for (int64_t j = 0; j < NJ; ++j) c[j] += a * B[k * NJ + j];
    }
  }
}
