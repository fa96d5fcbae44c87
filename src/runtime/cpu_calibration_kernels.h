// The measuring kernels behind calibrate_cpu, one file each (cpu_stream.cpp, cpu_fma_peak.cpp),
// and the all-threads timing loop they share.
#pragma once
#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "runtime/calibration.h"

namespace ekb::runtime::cpu_calibration {

// Starts `threads` threads once and runs body(thread) on all of them `reps` times, every
// repetition starting together behind a barrier. Returns the wall seconds of each repetition,
// from the barrier that starts it to the barrier where the last thread finishes.
std::vector<double> time_on_threads(int threads, int reps, const std::function<void(int thread)>& body);

// The [begin, end) share of `n` items that thread `t` of `threads` owns.
inline std::pair<size_t, size_t> thread_share(size_t n, int t, int threads) {
  return {n * t / threads, n * (t + 1) / threads};
}

struct StreamResult {
  Measurement copy_gbs;   // a[i] = b[i]: 2 arrays of traffic
  Measurement triad_gbs;  // a[i] = b[i] + s * c[i]: 3 arrays of traffic
  // The same with streaming (non-temporal) stores, on x86-64 (runs 0 elsewhere).
  Measurement copy_streaming_gbs;
  Measurement triad_streaming_gbs;
  // Reads alone (a sum over a), each thread reading its share as two streams at once: 1 array.
  Measurement read_gbs;
  size_t array_bytes = 0;
};
// Bytes are counted as STREAM does: each array element read or written once (a write-allocate
// read is not counted), so the numbers compare with published STREAM results. A plain store
// reads its line first, so the plain kernels move a third (copy) or a quarter (triad) more than
// they count; streaming stores do not, and a kernel that uses them (the nontemporal directive)
// moves its counted bytes faster than the plain kernels do: the roof is the best of all four.
StreamResult measure_stream(int threads, size_t array_bytes, int runs);

struct FmaPeakResult {
  std::string isa;  // "avx512f", "avx2+fma", "generic"
  int lanes = 0;    // FP32 lanes per vector
  Measurement gflops;
};
// One result per SIMD variant this CPU supports, widest first.
std::vector<FmaPeakResult> measure_fma_peak(int threads, int runs, double seconds_per_run);

// Size of the largest data/unified cache level from sysfs, or 0 if unknown.
size_t last_level_cache_bytes();

}  // namespace ekb::runtime::cpu_calibration
