// STREAM-style memory bandwidth: copy and triad over arrays much larger than the last-level cache,
// every thread streaming its own contiguous share (first-touched by that thread).
#include <sys/mman.h>

#include <cstdlib>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "eval/cpu_calibration_kernels.h"

namespace ekb::eval::cpu_calibration {

namespace {

// Bytes moved per second of each repetition, the first repetition (a warm-up) dropped.
Measurement rates(const std::vector<double>& seconds, double bytes_per_rep) {
  std::vector<double> gbs;
  for (size_t i = 1; i < seconds.size(); ++i) gbs.push_back(bytes_per_rep / seconds[i] / 1e9);
  return summarize_higher_is_better(gbs);
}

// A page-aligned array backed by transparent huge pages where the kernel allows: faulting in
// gigabytes 4 KiB at a time would take longer than the measurement itself.
struct HugeArray {
  double* data = nullptr;
  explicit HugeArray(size_t n) {
    constexpr size_t kHuge = size_t{2} << 20;
    size_t bytes = (n * sizeof(double) + kHuge - 1) / kHuge * kHuge;
    data = static_cast<double*>(std::aligned_alloc(kHuge, bytes));
    if (!data) throw std::bad_alloc();
    madvise(data, bytes, MADV_HUGEPAGE);  // advice only: failure just means small pages
  }
  ~HugeArray() { std::free(data); }
  HugeArray(const HugeArray&) = delete;
  HugeArray& operator=(const HugeArray&) = delete;
};

}  // namespace

StreamResult measure_stream(int threads, size_t array_bytes, int runs) {
  const size_t n = array_bytes / sizeof(double);
  // Left uninitialized here so that each thread's pages are first touched (placed) by that thread.
  HugeArray a(n), b(n), c(n);
  double* pa = a.data;
  double* pb = b.data;
  double* pc = c.data;
  time_on_threads(threads, 1, [&](int t) {
    auto [lo, hi] = thread_share(n, t, threads);
    for (size_t i = lo; i < hi; ++i) pa[i] = 1.0, pb[i] = 2.0, pc[i] = 0.5;
  });

  const double scalar = 3.0;
  std::vector<double> copy_s = time_on_threads(threads, runs + 1, [&](int t) {
    auto [lo, hi] = thread_share(n, t, threads);
    for (size_t i = lo; i < hi; ++i) pc[i] = pa[i];
  });
  std::vector<double> triad_s = time_on_threads(threads, runs + 1, [&](int t) {
    auto [lo, hi] = thread_share(n, t, threads);
    for (size_t i = lo; i < hi; ++i) pa[i] = pb[i] + scalar * pc[i];
  });
#if defined(__x86_64__)
  // Streaming stores of 16 bytes (SSE2, every x86-64) from each thread's first 16-byte boundary;
  // the fence makes them visible before the repetition's closing barrier.
  auto streaming = [&](double* out, auto value) {
    return [&, out, value](int t) {
      auto [lo, hi] = thread_share(n, t, threads);
      size_t i = lo;
      if (i % 2 != 0 && i < hi) out[i] = value(i), ++i;
      for (; i + 2 <= hi; i += 2) _mm_stream_pd(out + i, _mm_set_pd(value(i + 1), value(i)));
      if (i < hi) out[i] = value(i);
      _mm_sfence();
    };
  };
  std::vector<double> copy_streaming_s =
      time_on_threads(threads, runs + 1, streaming(pc, [&](size_t i) { return pa[i]; }));
  std::vector<double> triad_streaming_s =
      time_on_threads(threads, runs + 1, streaming(pa, [&](size_t i) { return pb[i] + scalar * pc[i]; }));
#endif
  // Reading a result keeps the stores observable, so no compiler may drop the loops.
  volatile double sink = pa[n / 2] + pc[n / 3];
  (void)sink;

  StreamResult r;
  r.array_bytes = n * sizeof(double);
  r.copy_gbs = rates(copy_s, 2.0 * static_cast<double>(r.array_bytes));
  r.triad_gbs = rates(triad_s, 3.0 * static_cast<double>(r.array_bytes));
#if defined(__x86_64__)
  r.copy_streaming_gbs = rates(copy_streaming_s, 2.0 * static_cast<double>(r.array_bytes));
  r.triad_streaming_gbs = rates(triad_streaming_s, 3.0 * static_cast<double>(r.array_bytes));
#endif
  return r;
}

}  // namespace ekb::eval::cpu_calibration
