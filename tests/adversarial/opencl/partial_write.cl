// workload: linalg.gemm/small
// expect: unwritten_output
// Correct, but only for the first half of the output.
__kernel void gemm(__global const float* C_in, __global const float* A, __global const float* B,
                   __global float* C, long NI, long NJ, long NK) {
  long e = get_global_id(0);
  if (e >= NI * NJ) return;
  long i = e / NJ, j = e % NJ;
  float acc = 0.0f;
  for (long k = 0; k < NK; ++k) acc += 1.5f * A[i * NK + k] * B[k * NJ + j];
  C[e] = 1.2f * C_in[e] + acc;
}
/* ekb-launch
kernel gemm global=[NI * NJ / 2] args=[C_in, A, B, C, NI, NJ, NK]
*/
