// workload: linalg.gemm/small
// expect: unwritten_output
// Launches nothing: the outputs keep their poison.
extern "C" void ekb_main(const float* C_in, const float* A, const float* B, float* C, int64_t NI, int64_t NJ,
                         int64_t NK, cudaStream_t stream) {}
