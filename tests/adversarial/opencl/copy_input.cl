// workload: linalg.gemm/small
// expect: mismatch
// Copies the input C_in to the output (the shape fits; the values do not).
__kernel void copy(__global const float* C_in, __global float* C) { C[get_global_id(0)] = C_in[get_global_id(0)]; }
/* ekb-launch
kernel copy global=[NI * NJ] args=[C_in, C]
*/
