// workload: linalg.gemm/small
// expect: compile
// Kernels, but no launch description.
__kernel void gemm(__global const float* C_in, __global const float* A, __global const float* B,
                   __global float* C, long NI, long NJ, long NK) {
  long e = get_global_id(0);
  if (e >= NI * NJ) return;
  long i = e / NJ, j = e % NJ;
  float acc = 0.0f;
  for (long k = 0; k < NK; ++k) acc += 1.5f * A[i * NK + k] * B[k * NJ + j];
  C[e] = 1.2f * C_in[e] + acc;
}
