// workload: linalg.gemm/small
// expect: none
// Correct in another way: 8x8 work-groups over a 2-D range, tiles of A and B staged in local memory
// (barriers), the products summed in another order.
#define TS 8
__kernel void gemm_tiled(__global const float* C_in, __global const float* A, __global const float* B,
                   __global float* C, long NI, long NJ, long NK) {
  __local float As[TS][TS], Bs[TS][TS];
  const long i = get_global_id(1), j = get_global_id(0);
  const int li = get_local_id(1), lj = get_local_id(0);
  float acc = 0.0f;
  for (long k0 = 0; k0 < NK; k0 += TS) {
    As[li][lj] = (i < NI && k0 + lj < NK) ? A[i * NK + k0 + lj] : 0.0f;
    Bs[li][lj] = (k0 + li < NK && j < NJ) ? B[(k0 + li) * NJ + j] : 0.0f;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int k = 0; k < TS; ++k) acc += As[li][k] * Bs[k][lj];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (i < NI && j < NJ) C[i * NJ + j] = 1.2f * C_in[i * NJ + j] + 1.5f * acc;
}
/* ekb-launch
kernel gemm_tiled global=[(NJ + 7) / 8 * 8, (NI + 7) / 8 * 8] local=[8, 8] args=[C_in, A, B, C, NI, NJ, NK]
*/
