// workload: linalg.gemm/small
// expect: timeout
// Never returns: waits for a value its output never holds.
__kernel void spin(__global float* C) {
  volatile __global float* c = C;
  while (c[0] != 42.0f) {
  }
}
/* ekb-launch
kernel spin global=[1] args=[C]
*/
