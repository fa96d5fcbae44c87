// workload: linalg.gemm/small
// expect: compile
// Keeps its last answer in a program-scope buffer to replay it: OpenCL C 2.0 has such variables,
// the ABI's OpenCL C 1.2 does not (the program is built with -cl-std=CL1.2).
__global float saved[60 * 70];
__kernel void gemm(__global const float* C_in, __global const float* A, __global const float* B,
                   __global float* C, long NI, long NJ, long NK) {
  long e = get_global_id(0);
  if (e >= NI * NJ) return;
  long i = e / NJ, j = e % NJ;
  float acc = 0.0f;
  for (long k = 0; k < NK; ++k) acc += 1.5f * A[i * NK + k] * B[k * NJ + j];
  C[e] = 1.2f * C_in[e] + acc;
  saved[e] = C[e];
}
/* ekb-launch
kernel gemm global=[(NI * NJ + 63) / 64 * 64] local=[64] args=[C_in, A, B, C, NI, NJ, NK]
*/
