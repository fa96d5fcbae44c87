// workload: linalg.gemm/small
// expect: load
// Declares its parameters int where the ABI passes long: refused when the arguments are set.
__kernel void gemm(__global const float* C_in, __global const float* A, __global const float* B,
                   __global float* C, int NI, int NJ, int NK) {
  int e = get_global_id(0);
  if (e >= NI * NJ) return;
  C[e] = 0.0f;
}
/* ekb-launch
kernel gemm global=[(NI * NJ + 63) / 64 * 64] local=[64] args=[C_in, A, B, C, NI, NJ, NK]
*/
