// workload: linalg.gemm/small
// expect: crash
// Correct, then resets the device (cudaDeviceReset): the context the harness gave it is destroyed,
// with the harness's buffers and stream. The candidate's fault, never the harness's (internal).
__global__ void gemm(const float* C_in, const float* A, const float* B, float* C, int64_t NI, int64_t NJ, int64_t NK) {
  int64_t e = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (e >= NI * NJ) return;
  int64_t i = e / NJ, j = e % NJ;
  float acc = 0.0f;
  for (int64_t k = 0; k < NK; ++k) acc += 1.5f * A[i * NK + k] * B[k * NJ + j];
  C[e] = 1.2f * C_in[e] + acc;
}
extern "C" void ekb_main(const float* C_in, const float* A, const float* B, float* C, int64_t NI, int64_t NJ,
                         int64_t NK, cudaStream_t stream) {
  gemm<<<(unsigned)((NI * NJ + 127) / 128), 128, 0, stream>>>(C_in, A, B, C, NI, NJ, NK);
  cudaStreamSynchronize(stream);
  cudaDeviceReset();
}
