// STREAM-style memory bandwidth: copy and triad over arrays much larger than the last-level cache,
// every thread streaming its own contiguous share (first-touched by that thread).
#include <sys/mman.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "runtime/cpu_calibration_kernels.h"

namespace ekb::runtime::cpu_calibration {

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
  // Reads alone: a core keeps only so many lines in flight (its fill buffers), and writes with
  // streaming stores leave through buffers of their own, so reads stall long before a copy does.
  // Two streams per thread (the halves of its share at once), as a GEMV's column bands read them:
  // one stream reached 21 GB/s here, two 26. Integer sums of the bits: four independent chains
  // of one-cycle adds, never the limit.
  std::vector<uint64_t> read_sums(static_cast<size_t>(threads));
  std::vector<double> read_s = time_on_threads(threads, runs + 1, [&](int t) {
    auto [lo, hi] = thread_share(n, t, threads);
    const size_t half = (hi - lo) / 2;
    uint64_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    for (size_t i = lo; i + 1 < lo + half; i += 2) {
      uint64_t v[4];
      std::memcpy(&v[0], pa + i, 16);
      std::memcpy(&v[2], pa + i + half, 16);
      s0 += v[0], s1 += v[1], s2 += v[2], s3 += v[3];
    }
    read_sums[static_cast<size_t>(t)] = s0 + s1 + s2 + s3;
  });
  // Reading a result keeps the stores observable, so no compiler may drop the loops.
  volatile double sink = pa[n / 2] + pc[n / 3] + static_cast<double>(read_sums[0] & 1);
  (void)sink;

  StreamResult r;
  r.array_bytes = n * sizeof(double);
  r.copy_gbs = rates(copy_s, 2.0 * static_cast<double>(r.array_bytes));
  r.triad_gbs = rates(triad_s, 3.0 * static_cast<double>(r.array_bytes));
  // The bytes each thread read: its share rounded down to pairs in each half (all but a few).
  r.read_gbs = rates(read_s, static_cast<double>(r.array_bytes));
#if defined(__x86_64__)
  r.copy_streaming_gbs = rates(copy_streaming_s, 2.0 * static_cast<double>(r.array_bytes));
  r.triad_streaming_gbs = rates(triad_streaming_s, 3.0 * static_cast<double>(r.array_bytes));
#endif
  return r;
}

}  // namespace ekb::runtime::cpu_calibration
