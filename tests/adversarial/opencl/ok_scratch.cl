// workload: linalg.gemm/small
// expect: none
// Two launches through declared scratch memory (docs/ABI.md): the product A·B into P, then the
// combination with C_in; the platform picks the local size.
__kernel void product(__global const float* A, __global const float* B, __global float* P, long NI, long NJ, long NK) {
  long e = get_global_id(0);
  long i = e / NJ, j = e % NJ;
  float acc = 0.0f;
  for (long k = 0; k < NK; ++k) acc += A[i * NK + k] * B[k * NJ + j];
  P[e] = acc;
}
__kernel void combine(__global const float* C_in, __global const float* P, __global float* C) {
  long e = get_global_id(0);
  C[e] = 1.2f * C_in[e] + 1.5f * P[e];
}
/* ekb-launch
scratch P NI * NJ * 4
kernel product global=[NI * NJ] args=[A, B, P, NI, NJ, NK]
kernel combine global=[NI * NJ] args=[C_in, P, C]
*/
