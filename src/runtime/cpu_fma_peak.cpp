// Peak FP32 rate: many independent FMA chains per thread, so that every FMA unit has a new
// independent operation each cycle (latency x ports chains are needed; more do no harm). ekb is
// built for the baseline ISA, so each SIMD width is a target("...") variant chosen at run time.
#include <chrono>

#include "runtime/cpu_calibration_kernels.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define EKB_X86 1
#endif

namespace ekb::runtime::cpu_calibration {

namespace {

// x <- x * m + c converges to c / (1 - m) = 1: the values stay normal (no denormal slowdowns)
// and the chain never becomes constant, so nothing can be folded away.
constexpr float kMul = 0.999f;
constexpr float kAdd = 0.001f;

#ifdef EKB_X86
constexpr int kChains512 = 24;  // of 32 zmm registers; 2 ports x 4 cycles latency needs 8
__attribute__((target("avx512f"))) float fma_chains_avx512(long iters) {
  __m512 acc[kChains512];
  const __m512 m = _mm512_set1_ps(kMul), c = _mm512_set1_ps(kAdd);
#pragma GCC unroll 24
  for (int j = 0; j < kChains512; ++j) acc[j] = _mm512_set1_ps(static_cast<float>(j));
  for (long i = 0; i < iters; ++i) {
#pragma GCC unroll 24
    for (int j = 0; j < kChains512; ++j) acc[j] = _mm512_fmadd_ps(acc[j], m, c);
  }
  __m512 s = acc[0];
#pragma GCC unroll 24
  for (int j = 1; j < kChains512; ++j) s = _mm512_add_ps(s, acc[j]);
  // Not _mm512_reduce_add_ps: GCC 12 warns about its internal undefined vectors.
  float out[16];
  _mm512_storeu_ps(out, s);
  float sum = 0;
  for (float v : out) sum += v;
  return sum;
}

constexpr int kChains256 = 12;  // of 16 ymm registers
__attribute__((target("avx2,fma"))) float fma_chains_avx2(long iters) {
  __m256 acc[kChains256];
  const __m256 m = _mm256_set1_ps(kMul), c = _mm256_set1_ps(kAdd);
#pragma GCC unroll 12
  for (int j = 0; j < kChains256; ++j) acc[j] = _mm256_set1_ps(static_cast<float>(j));
  for (long i = 0; i < iters; ++i) {
#pragma GCC unroll 12
    for (int j = 0; j < kChains256; ++j) acc[j] = _mm256_fmadd_ps(acc[j], m, c);
  }
  __m256 s = acc[0];
#pragma GCC unroll 12
  for (int j = 1; j < kChains256; ++j) s = _mm256_add_ps(s, acc[j]);
  float out[8];
  _mm256_storeu_ps(out, s);
  return out[0] + out[1] + out[2] + out[3] + out[4] + out[5] + out[6] + out[7];
}
#endif

// Portable fallback: a multiply and an add per element (2 flops), vectorized at the baseline ISA.
constexpr int kGenericLanes = 4;
constexpr int kGenericChains = 8;
float fma_chains_generic(long iters) {
  float acc[kGenericChains * kGenericLanes];
  for (int j = 0; j < kGenericChains * kGenericLanes; ++j) acc[j] = static_cast<float>(j);
  for (long i = 0; i < iters; ++i) {
#pragma GCC unroll 32
    for (int j = 0; j < kGenericChains * kGenericLanes; ++j) acc[j] = acc[j] * kMul + kAdd;
  }
  float s = 0;
  for (float v : acc) s += v;
  return s;
}

struct Variant {
  const char* isa;
  int lanes;
  int chains;
  float (*run)(long iters);
  bool (*supported)();
};

const std::vector<Variant>& variants() {
  static const std::vector<Variant> v = {
#ifdef EKB_X86
      {"avx512f", 16, kChains512, fma_chains_avx512, [] { return __builtin_cpu_supports("avx512f") != 0; }},
      {"avx2+fma", 8, kChains256, fma_chains_avx2,
       [] { return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"); }},
#endif
      {"generic", kGenericLanes, kGenericChains, fma_chains_generic, [] { return true; }},
  };
  return v;
}

double seconds_of(const Variant& v, long iters) {
  auto t0 = std::chrono::steady_clock::now();
  volatile float sink = v.run(iters);
  (void)sink;
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// Iterations that take about `seconds` on one thread, doubling a probe until it is long enough
// to time reliably.
long iterations_for(const Variant& v, double seconds) {
  long iters = 1 << 12;
  double t = seconds_of(v, iters);
  while (t < 0.01) {
    iters *= 2;
    t = seconds_of(v, iters);
  }
  return std::max(1L, static_cast<long>(iters * seconds / t));
}

}  // namespace

std::vector<FmaPeakResult> measure_fma_peak(int threads, int runs, double seconds_per_run) {
  std::vector<FmaPeakResult> out;
  for (const Variant& v : variants()) {
    if (!v.supported()) continue;
    const long iters = iterations_for(v, seconds_per_run);
    std::vector<float> sinks(threads);
    std::vector<double> seconds =
        time_on_threads(threads, runs + 1, [&](int t) { sinks[t] = v.run(iters); });
    // Each iteration: `chains` vector FMAs of `lanes` lanes, 2 flops per lane (multiply and add).
    const double flops = 2.0 * v.lanes * v.chains * static_cast<double>(iters) * threads;
    std::vector<double> gflops;
    for (size_t i = 1; i < seconds.size(); ++i) gflops.push_back(flops / seconds[i] / 1e9);
    out.push_back({v.isa, v.lanes, summarize_higher_is_better(gflops)});
  }
  return out;
}

}  // namespace ekb::runtime::cpu_calibration
