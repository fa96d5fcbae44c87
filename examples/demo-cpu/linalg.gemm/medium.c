/* Hand-optimized: C = beta*C_in + alpha*A*B, 64x64 tiles over i and k, OpenMP over row tiles, the
 * j loop contiguous so clang vectorizes it with FMA. */
void ekb_main(const float* C_in, const float* A, const float* B, float* C,
              int64_t NI, int64_t NJ, int64_t NK) {
  const float alpha = 1.5f, beta = 1.2f;
#pragma omp parallel for schedule(static)
  for (int64_t i0 = 0; i0 < NI; i0 += 32) {
    int64_t i1 = i0 + 32 < NI ? i0 + 32 : NI;
    for (int64_t i = i0; i < i1; ++i)
      for (int64_t j = 0; j < NJ; ++j) C[i * NJ + j] = beta * C_in[i * NJ + j];
    for (int64_t k0 = 0; k0 < NK; k0 += 64) {
      int64_t k1 = k0 + 64 < NK ? k0 + 64 : NK;
      for (int64_t i = i0; i < i1; ++i) {
        float* restrict c = C + i * NJ;
        for (int64_t k = k0; k < k1; ++k) {
          const float a = alpha * A[i * NK + k];
          const float* restrict b = B + k * NJ;
          for (int64_t j = 0; j < NJ; ++j) c[j] += a * b[j];
        }
      }
    }
  }
}
