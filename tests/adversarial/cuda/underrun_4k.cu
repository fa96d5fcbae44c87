// workload: linalg.gemm/small
// expect: out_of_bounds
// Correct, then writes one float 4 KiB before the start of C: in the mapped guard bytes before its
// region on the device (checked after the call), not in another buffer.
__global__ void gemm(const float* C_in, const float* A, const float* B, float* C, int64_t NI, int64_t NJ, int64_t NK) {
  int64_t e = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (e >= NI * NJ) return;
  int64_t i = e / NJ, j = e % NJ;
  float acc = 0.0f;
  for (int64_t k = 0; k < NK; ++k) acc += 1.5f * A[i * NK + k] * B[k * NJ + j];
  C[e] = 1.2f * C_in[e] + acc;
}
__global__ void before(float* C) { C[-1024] = 0.0f; }
extern "C" void ekb_main(const float* C_in, const float* A, const float* B, float* C, int64_t NI, int64_t NJ,
                         int64_t NK, cudaStream_t stream) {
  gemm<<<(unsigned)((NI * NJ + 127) / 128), 128, 0, stream>>>(C_in, A, B, C, NI, NJ, NK);
  before<<<1, 1, 0, stream>>>(C);
}
