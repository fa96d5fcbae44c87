// Times the native compiler's CUDA output for linalg.gemm (C = 1.5 A B + 1.2 C_in, row-major,
// NI x NK times NK x NJ, f32) against cuBLAS SGEMM on the same data, and checks it against cuBLAS.
// The generated file (ekb emit ... --backend cuda) defines ekb_main; bench/cuda_schedule_gemm.sh
// builds both with nvcc and runs them. Prints one line: sizes, times (median of 20), TFLOP/s, and
// the largest relative difference from cuBLAS.
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

extern "C" void ekb_main(const float* C_in, const float* A, const float* B, float* C, int64_t NI, int64_t NJ,
                         int64_t NK, cudaStream_t stream);

#define CHECK(x)                                                                          \
  do {                                                                                    \
    cudaError_t e = (x);                                                                  \
    if (e != cudaSuccess) {                                                               \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e)); \
      std::exit(1);                                                                       \
    }                                                                                     \
  } while (0)

template <class F>
double median_ms(F&& run, cudaStream_t s) {
  cudaEvent_t a, b;
  CHECK(cudaEventCreate(&a));
  CHECK(cudaEventCreate(&b));
  for (int i = 0; i < 3; ++i) run();  // warm-up
  std::vector<float> ms;
  for (int i = 0; i < 20; ++i) {
    CHECK(cudaEventRecord(a, s));
    run();
    CHECK(cudaEventRecord(b, s));
    CHECK(cudaEventSynchronize(b));
    float t = 0;
    CHECK(cudaEventElapsedTime(&t, a, b));
    ms.push_back(t);
  }
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: %s NI NJ NK (the workload the kernel was emitted for)\n", argv[0]);
    return 2;
  }
  const int64_t NI = std::atoll(argv[1]), NJ = std::atoll(argv[2]), NK = std::atoll(argv[3]);
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> u(0.f, 1.f);
  std::vector<float> hA(NI * NK), hB(NK * NJ), hC(NI * NJ);
  for (float& x : hA) x = u(rng);
  for (float& x : hB) x = u(rng);
  for (float& x : hC) x = u(rng);
  float *A, *B, *Cin, *C, *Cref;
  CHECK(cudaMalloc(&A, hA.size() * 4));
  CHECK(cudaMalloc(&B, hB.size() * 4));
  CHECK(cudaMalloc(&Cin, hC.size() * 4));
  CHECK(cudaMalloc(&C, hC.size() * 4));
  CHECK(cudaMalloc(&Cref, hC.size() * 4));
  CHECK(cudaMemcpy(A, hA.data(), hA.size() * 4, cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(B, hB.data(), hB.size() * 4, cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(Cin, hC.data(), hC.size() * 4, cudaMemcpyHostToDevice));
  cudaStream_t s;
  CHECK(cudaStreamCreate(&s));
  cublasHandle_t h;
  cublasCreate(&h);
  cublasSetStream(h, s);
  cublasSetMathMode(h, CUBLAS_PEDANTIC_MATH);  // plain FP32, no TF32
  const float alpha = 1.5f, beta = 1.2f;
  // Row-major C = A B is column-major C^T = B^T A^T.
  auto vendor = [&] {
    CHECK(cudaMemcpyAsync(Cref, Cin, hC.size() * 4, cudaMemcpyDeviceToDevice, s));
    cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, (int)NJ, (int)NI, (int)NK, &alpha, B, (int)NJ, A, (int)NK, &beta, Cref,
                (int)NJ);
  };
  auto copy_only = [&] { CHECK(cudaMemcpyAsync(Cref, Cin, hC.size() * 4, cudaMemcpyDeviceToDevice, s)); };
  auto ours = [&] { ekb_main(Cin, A, B, C, NI, NJ, NK, s); };
  double t_ours = median_ms(ours, s);
  double t_vendor = median_ms(vendor, s) - median_ms(copy_only, s);
  vendor();  // the timing of the copy alone left Cref = C_in
  CHECK(cudaStreamSynchronize(s));
  CHECK(cudaGetLastError());
  std::vector<float> got(hC.size()), want(hC.size());
  CHECK(cudaMemcpy(got.data(), C, got.size() * 4, cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(want.data(), Cref, want.size() * 4, cudaMemcpyDeviceToHost));
  double worst = 0;
  for (size_t i = 0; i < got.size(); ++i)
    worst = std::max(worst, std::fabs((double)got[i] - want[i]) / std::max(1.0, std::fabs((double)want[i])));
  // Both against a float64 reference on a sample of elements (which one is off, if any).
  double worst_ours = 0, worst_vendor = 0;
  for (int n = 0; n < 256; ++n) {
    int64_t i = rng() % NI, j = rng() % NJ;
    double ref = 1.2 * hC[i * NJ + j];
    for (int64_t k = 0; k < NK; ++k) ref += 1.5 * (double)hA[i * NK + k] * hB[k * NJ + j];
    worst_ours = std::max(worst_ours, std::fabs(got[i * NJ + j] - ref) / std::max(1.0, std::fabs(ref)));
    worst_vendor = std::max(worst_vendor, std::fabs(want[i * NJ + j] - ref) / std::max(1.0, std::fabs(ref)));
  }
  std::printf("sampled max rel error vs float64: schedule %.2e, cuBLAS %.2e\n", worst_ours, worst_vendor);
  worst = std::max(worst_ours, worst_vendor);
  const double flop = 2.0 * NI * NJ * NK;
  std::printf("gemm %lldx%lldx%lld: schedule %.3f ms = %.1f TFLOP/s, cuBLAS %.3f ms = %.1f TFLOP/s, ratio %.2f, "
              "max rel diff %.2e\n",
              (long long)NI, (long long)NJ, (long long)NK, t_ours, flop / t_ours * 1e-9, t_vendor,
              flop / t_vendor * 1e-9, t_vendor / t_ours, worst);
  return worst < 1e-3 ? 0 : 1;
}
