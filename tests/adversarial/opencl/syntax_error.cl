// workload: linalg.gemm/small
// expect: compile
// Not OpenCL C: the platform's compiler rejects it.
__kernel void gemm(__global const float* C_in, __global const float* A, __global const float* B,
                   __global float* C, long NI, long NJ, long NK) {
  this is not code;
}
/* ekb-launch
kernel gemm global=[(NI * NJ + 63) / 64 * 64] local=[64] args=[C_in, A, B, C, NI, NJ, NK]
*/
