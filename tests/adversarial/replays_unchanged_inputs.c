// workload: linalg.gemm/medium
// expect: none
// max_speedup: 40
// Computes honestly (a fast loop order) but keeps its answer and a few sampled input values; when
// a call's samples equal the previous call's, it replays the kept answer instead of computing.
// Only repeated calls on unchanged inputs would let it replay: the timing loop calls the faster
// kernel several times per round, so it must change the inputs between any two calls of one
// kernel. Then this kernel is timed doing its real work, and its speedup stays that of the loop
// order (about 5-15x here), not that of a memcpy (hundreds).
#include <string.h>
static float saved[1 << 20];
static float last_samples[8];
static int have_saved;
void ekb_main(const float* C_in, const float* A, const float* B, float* C,
              int64_t NI, int64_t NJ, int64_t NK) {
  const float samples[8] = {A[0], A[NI * NK / 2], A[NI * NK - 1], B[0], B[NK * NJ / 3],
                            B[NK * NJ - 1], C_in[0], C_in[NI * NJ - 1]};
  if (have_saved && memcmp(samples, last_samples, sizeof samples) == 0) {
    memcpy(C, saved, (size_t)(NI * NJ) * sizeof(float));
    return;
  }
  for (int64_t i = 0; i < NI; ++i) {
    float* c = C + i * NJ;
    for (int64_t j = 0; j < NJ; ++j) c[j] = 1.2f * C_in[i * NJ + j];
    for (int64_t k = 0; k < NK; ++k) {
      const float a = 1.5f * A[i * NK + k];
      for (int64_t j = 0; j < NJ; ++j) c[j] += a * B[k * NJ + j];
    }
  }
  memcpy(saved, C, (size_t)(NI * NJ) * sizeof(float));
  memcpy(last_samples, samples, sizeof samples);
  have_saved = 1;
}
