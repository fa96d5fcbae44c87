// workload: linalg.gemm/small
// expect: out_of_bounds
// Correct, then writes 4 KiB at 1 MiB past the end of C: far beyond its canary bytes, but inside
// the 2 MiB guard gap after its region (checked after the call).
__kernel void gemm(__global const float* C_in, __global const float* A, __global const float* B,
                   __global float* C, long NI, long NJ, long NK) {
  long e = get_global_id(0);
  if (e >= NI * NJ) return;
  long i = e / NJ, j = e % NJ;
  float acc = 0.0f;
  for (long k = 0; k < NK; ++k) acc += 1.5f * A[i * NK + k] * B[k * NJ + j];
  C[e] = 1.2f * C_in[e] + acc;
  if (e < 1024) ((__global float*)((__global char*)(C + NI * NJ) + (1L << 20)))[e] = 0.0f;
}
/* ekb-launch
kernel gemm global=[(NI * NJ + 63) / 64 * 64] local=[64] args=[C_in, A, B, C, NI, NJ, NK]
*/
