// Baseline for linalg.gemm: PolyBench's loop nest, C = beta*C_in + sum_k alpha*A[i][k]*B[k][j].
void ekb_main(const float* C_in, const float* A, const float* B, float* C,
              int64_t NI, int64_t NJ, int64_t NK) {
  const float alpha = 1.5f, beta = 1.2f;
  for (int64_t i = 0; i < NI; ++i)
    for (int64_t j = 0; j < NJ; ++j) {
      float acc = 0.0f;
      for (int64_t k = 0; k < NK; ++k) acc += alpha * A[i * NK + k] * B[k * NJ + j];
      C[i * NJ + j] = beta * C_in[i * NJ + j] + acc;
    }
}
