// workload: linalg.gemm/small
// expect: unwritten_output
// Launches a kernel that does nothing: the outputs keep their poison.
__kernel void nothing(__global float* C) {}
/* ekb-launch
kernel nothing global=[1] args=[C]
*/
