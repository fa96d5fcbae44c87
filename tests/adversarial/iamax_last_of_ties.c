// workload: linalg.iamax/n4096
// expect: mismatch
// IxAMAX returns the first index of the largest magnitude; this kernel keeps the last (`>=`). Random
// floats never tie, so only a trial with repeated maxima tells the two apart.
#include <math.h>
#include <stdint.h>
void ekb_main(const float* x, int32_t* idx, int64_t N) {
  int32_t best = 0;
  float m = fabsf(x[0]);
  for (int64_t i = 1; i < N; ++i)
    if (fabsf(x[i]) >= m) {
      m = fabsf(x[i]);
      best = (int32_t)i;
    }
  idx[0] = best;
}
