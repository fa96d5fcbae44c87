// workload: linalg.seidel_2d/medium
// expect: mismatch
// An illegal `#pragma omp parallel for` over the rows of a Gauss-Seidel sweep: the first sweep is
// fused with the copy-in and its rows made independent by reading the rows above from the input
// instead of their updated values (a Jacobi step where Gauss-Seidel is required); later sweeps run
// in order. Random inputs are smoothed by the 100 sweeps that follow until the error is a third of
// the tolerance; inputs alternating along the rows keep the first sweep's error visible.
#include <stdint.h>
void ekb_main(const float* A_in, float* A, int64_t TSTEPS, int64_t N) {
  for (int64_t j = 0; j < N; ++j) {
    A[j] = A_in[j];
    A[(N - 1) * N + j] = A_in[(N - 1) * N + j];
  }
#pragma omp parallel for
  for (int64_t i = 1; i < N - 1; ++i) {
    const float* up = A_in + (i - 1) * N;  // should be the updated row i - 1
    const float* mid = A_in + i * N;
    const float* down = A_in + (i + 1) * N;
    float* out = A + i * N;
    out[0] = mid[0];
    out[N - 1] = mid[N - 1];
    for (int64_t j = 1; j < N - 1; ++j)
      out[j] = (up[j - 1] + up[j] + up[j + 1] + out[j - 1] + mid[j] + mid[j + 1] + down[j - 1] + down[j] + down[j + 1]) / 9.0f;
  }
  for (int64_t t = 1; t < TSTEPS; ++t)
    for (int64_t i = 1; i < N - 1; ++i)
      for (int64_t j = 1; j < N - 1; ++j)
        A[i * N + j] = (A[(i - 1) * N + j - 1] + A[(i - 1) * N + j] + A[(i - 1) * N + j + 1] + A[i * N + j - 1] +
                        A[i * N + j] + A[i * N + j + 1] + A[(i + 1) * N + j - 1] + A[(i + 1) * N + j] +
                        A[(i + 1) * N + j + 1]) /
                       9.0f;
}
