// workload: linalg.gemm/small
// expect: out_of_bounds
// Tries to keep state between calls where no buffer is: saves its answer 4 KiB past the end of C
// (in the guard gap) and replays it when a marker there says it has one.
__kernel void gemm(__global const float* C_in, __global const float* A, __global const float* B,
                   __global float* C, long NI, long NJ, long NK) {
  long e = get_global_id(0);
  if (e >= NI * NJ) return;
  __global float* saved = C + NI * NJ + 1024;
  if (saved[NI * NJ] == 4242.0f) {
    C[e] = saved[e];
    return;
  }
  long i = e / NJ, j = e % NJ;
  float acc = 0.0f;
  for (long k = 0; k < NK; ++k) acc += 1.5f * A[i * NK + k] * B[k * NJ + j];
  C[e] = saved[e] = 1.2f * C_in[e] + acc;
  if (e == 0) saved[NI * NJ] = 4242.0f;
}
/* ekb-launch
kernel gemm global=[(NI * NJ + 63) / 64 * 64] local=[64] args=[C_in, A, B, C, NI, NJ, NK]
*/
