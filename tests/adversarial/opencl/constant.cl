// workload: linalg.gemm/small
// expect: mismatch
// Writes the same constant everywhere.
__kernel void fill(__global float* C, long NI, long NJ) {
  long e = get_global_id(0);
  if (e < NI * NJ) C[e] = 1.0f;
}
/* ekb-launch
kernel fill global=[(NI * NJ + 63) / 64 * 64] local=[64] args=[C, NI, NJ]
*/
