// workload: linalg.correlation/mini
// expect: mismatch
// PolyBench's correlation without its `stddev <= eps` guard: right wherever every column of the data
// varies, which random inputs always do. A constant column makes its standard deviation 0 and its
// correlations 0/0; only a trial with constant columns (along the reduced axis) shows it.
#include <math.h>
#include <stdint.h>
void ekb_main(const float* data, float* corr, int64_t M, int64_t N) {
  float mean[M], stddev[M];
  for (int64_t j = 0; j < M; ++j) {
    float s = 0.0f;
    for (int64_t i = 0; i < N; ++i) s += data[i * M + j];
    mean[j] = s / (float)N;
  }
  for (int64_t j = 0; j < M; ++j) {
    float s = 0.0f;
    for (int64_t i = 0; i < N; ++i) s += (data[i * M + j] - mean[j]) * (data[i * M + j] - mean[j]);
    stddev[j] = sqrtf(s / (float)N);  // the guard `if (stddev[j] <= eps) stddev[j] = 1.0` is missing
  }
  const float sqrt_n = sqrtf((float)N);
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < M; ++j) {
      if (i == j) {
        corr[i * M + j] = 1.0f;
        continue;
      }
      float s = 0.0f;
      for (int64_t k = 0; k < N; ++k)
        s += (data[k * M + i] - mean[i]) / (sqrt_n * stddev[i]) * ((data[k * M + j] - mean[j]) / (sqrt_n * stddev[j]));
      corr[i * M + j] = s;
    }
}
