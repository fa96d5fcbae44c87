// workload: linalg.gemm/small
// expect: crash
// Writes through a wild pointer, far outside any buffer: a segfault on a CPU device, an
// execution error (illegal address) on a GPU.
__kernel void wild(__global float* C) { *(volatile __global float*)((__global char*)C + (1L << 40)) = 1.0f; }
/* ekb-launch
kernel wild global=[1] args=[C]
*/
