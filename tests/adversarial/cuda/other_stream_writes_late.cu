// workload: linalg.gemm/small
// expect: async_write
// Computes the answer on the harness's stream, then leaves a kernel on a stream of its own that
// waits about 20 ms and overwrites the output (work the stream's events never see).
__global__ void gemm(const float* C_in, const float* A, const float* B, float* C, int64_t NI, int64_t NJ, int64_t NK) {
  int64_t e = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (e >= NI * NJ) return;
  int64_t i = e / NJ, j = e % NJ;
  float acc = 0.0f;
  for (int64_t k = 0; k < NK; ++k) acc += 1.5f * A[i * NK + k] * B[k * NJ + j];
  C[e] = 1.2f * C_in[e] + acc;
}
__global__ void late(float* C) {
  for (int k = 0; k < 20; ++k) __nanosleep(1000000);
  C[0] = -1.0f;
}
extern "C" void ekb_main(const float* C_in, const float* A, const float* B, float* C, int64_t NI, int64_t NJ,
                         int64_t NK, cudaStream_t stream) {
  gemm<<<(unsigned)((NI * NJ + 127) / 128), 128, 0, stream>>>(C_in, A, B, C, NI, NJ, NK);
  cudaStreamSynchronize(stream);
  static cudaStream_t mine = nullptr;
  if (!mine) cudaStreamCreateWithFlags(&mine, cudaStreamNonBlocking);
  late<<<1, 1, 0, mine>>>(C);
}
