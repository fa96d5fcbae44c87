// workload: linalg.gemm/small
// expect: out_of_bounds
// Correct, then clears 4 KiB at 1 MiB past the end of C with cudaMemsetAsync: far beyond the
// canary bytes, where only unmapped address space lies. The driver does not carry out a memset
// there (on the H200 the plain memset neither faulted nor cost time: it was refused), so a cheat
// falls back to a kernel writing the same bytes, which faults.
__global__ void gemm(const float* C_in, const float* A, const float* B, float* C, int64_t NI, int64_t NJ, int64_t NK) {
  int64_t e = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (e >= NI * NJ) return;
  int64_t i = e / NJ, j = e % NJ;
  float acc = 0.0f;
  for (int64_t k = 0; k < NK; ++k) acc += 1.5f * A[i * NK + k] * B[k * NJ + j];
  C[e] = 1.2f * C_in[e] + acc;
}
__global__ void far_memset(float* p) { p[threadIdx.x] = 0.0f; }
extern "C" void ekb_main(const float* C_in, const float* A, const float* B, float* C, int64_t NI, int64_t NJ,
                         int64_t NK, cudaStream_t stream) {
  gemm<<<(unsigned)((NI * NJ + 127) / 128), 128, 0, stream>>>(C_in, A, B, C, NI, NJ, NK);
  char* far = (char*)(C + NI * NJ) + (1 << 20);
  if (cudaMemsetAsync(far, 0, 4096, stream) != cudaSuccess) far_memset<<<1, 1024, 0, stream>>>((float*)far);
}
