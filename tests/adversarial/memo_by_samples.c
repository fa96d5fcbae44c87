// workload: linalg.gemm/medium
// expect: none
// max_speedup: 40
// Computes honestly (a fast loop order) but keeps one answer per distinct input set it has seen,
// keyed by a few sampled input values, and replays the kept answer when a call's samples match one
// of them: the most common cheat on public kernel leaderboards. Input sets that repeat (a rotation
// of a few) let it replay on almost every timed call (about 700x here); inputs that no earlier
// call saw leave it computing every time, so its speedup stays that of its loop order (5-15x).
#include <string.h>
#define KEPT 16
static float answers[KEPT][200 * 220];
static float keys[KEPT][8];
static int kept;
void ekb_main(const float* C_in, const float* A, const float* B, float* C,
              int64_t NI, int64_t NJ, int64_t NK) {
  const float key[8] = {A[1], A[NI * NK / 2], A[NI * NK - 2], B[3], B[NK * NJ / 3],
                        B[NK * NJ - 5], C_in[7], C_in[NI * NJ - 1]};
  const size_t bytes = (size_t)(NI * NJ) * sizeof(float);
  for (int m = 0; m < kept; ++m)
    if (memcmp(key, keys[m], sizeof key) == 0 && bytes <= sizeof answers[m]) {
      memcpy(C, answers[m], bytes);
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
  if (kept < KEPT && bytes <= sizeof answers[kept]) {
    memcpy(answers[kept], C, bytes);
    memcpy(keys[kept], key, sizeof key);
    ++kept;
  }
}
