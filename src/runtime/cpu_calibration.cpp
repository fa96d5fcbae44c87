#include "runtime/cpu_calibration.h"

#include <algorithm>
#include <barrier>
#include <cctype>
#include <chrono>
#include <fstream>
#include <string>
#include <thread>
#include <unistd.h>

#include "runtime/cpu_backend.h"
#include "runtime/cpu_calibration_kernels.h"

namespace ekb::runtime {

namespace cpu_calibration {

std::vector<double> time_on_threads(int threads, int reps, const std::function<void(int thread)>& body) {
  std::vector<double> seconds(reps);
  std::barrier sync(threads);
  auto worker = [&](int t) {
    for (int r = 0; r < reps; ++r) {
      sync.arrive_and_wait();
      auto t0 = std::chrono::steady_clock::now();
      body(t);
      sync.arrive_and_wait();
      if (t == 0) seconds[r] = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    }
  };
  std::vector<std::jthread> pool;
  for (int t = 1; t < threads; ++t) pool.emplace_back(worker, t);
  worker(0);
  return seconds;
}

size_t last_level_cache_bytes() {
  size_t best = 0;
  for (int index = 0; index < 8; ++index) {
    std::string dir = "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(index) + "/";
    std::ifstream type_file(dir + "type"), size_file(dir + "size");
    std::string type, size;
    if (!(type_file >> type) || !(size_file >> size)) continue;
    if (type == "Instruction") continue;
    if (size.empty() || !std::isdigit(static_cast<unsigned char>(size[0]))) continue;
    size_t value = std::stoull(size);  // "491520K"
    char unit = size.back();
    if (unit == 'K') value <<= 10;
    if (unit == 'M') value <<= 20;
    best = std::max(best, value);
  }
  return best;
}

}  // namespace cpu_calibration

namespace {

// STREAM's rule: each array at least 4x the last-level cache, so that no pass hits in cache. Virtual
// machines often report the whole host's L3 (480 MiB here, with bandwidth already flat from 64 MiB
// arrays on), so the size is capped at 512 MiB: faulting in more pages would dominate the run time.
// Also kept within a 24th of physical memory (three arrays in an eighth) for small boards.
size_t default_array_bytes() {
  const size_t llc = cpu_calibration::last_level_cache_bytes();
  size_t bytes = std::clamp<size_t>(4 * llc, size_t{128} << 20, size_t{512} << 20);
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
  if (pages > 0 && page > 0) bytes = std::min(bytes, static_cast<size_t>(pages) * page / 24);
  return bytes;
}

}  // namespace

Calibration calibrate_cpu(const CpuCalibrationOptions& options) {
  const int threads = options.threads > 0
                          ? options.threads
                          : std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  const size_t array_bytes =
      options.array_bytes ? options.array_bytes : options.quick ? size_t{8} << 20 : default_array_bytes();
  const int runs = options.quick ? 2 : std::max(1, options.runs);
  const double seconds = options.quick ? 0.005 : options.seconds_per_run;

  auto t0 = std::chrono::steady_clock::now();
  auto stream = cpu_calibration::measure_stream(threads, array_bytes, runs);
  auto t1 = std::chrono::steady_clock::now();
  auto peaks = cpu_calibration::measure_fma_peak(threads, runs, seconds);
  auto t2 = std::chrono::steady_clock::now();

  Calibration c;
  c.backend = "cpu";
  c.device = cpu_model_name();
  c.created = utc_timestamp_now();
  // The roofs: the best STREAM kernel (plain or streaming stores), and the fastest SIMD variant.
  for (const Measurement* m :
       {&stream.copy_gbs, &stream.triad_gbs, &stream.copy_streaming_gbs, &stream.triad_streaming_gbs})
    if (m->runs > 0 && m->best > c.bandwidth_gbs.best) c.bandwidth_gbs = *m;
  c.read_bandwidth_gbs = stream.read_gbs;
  nlohmann::json peak_json = nlohmann::json::object();
  for (const auto& p : peaks) {
    if (p.gflops.best > c.peak_gflops.best) c.peak_gflops = p.gflops;
    peak_json[p.isa] = to_json(p.gflops);
    peak_json[p.isa]["lanes"] = p.lanes;
  }
  c.details = {{"method", calibration_method(ir::Target::Cpu)},
               {"threads", threads},
               {"quick", options.quick},
               {"stream",
                {{"array_bytes", stream.array_bytes},
                 {"last_level_cache_bytes", cpu_calibration::last_level_cache_bytes()},
                 {"copy_gbs", to_json(stream.copy_gbs)},
                 {"triad_gbs", to_json(stream.triad_gbs)},
                 {"copy_streaming_gbs", to_json(stream.copy_streaming_gbs)},
                 {"triad_streaming_gbs", to_json(stream.triad_streaming_gbs)},
                 {"read_gbs", to_json(stream.read_gbs)}}},
               {"fma_gflops", peak_json},
               {"seconds",
                {{"stream", std::chrono::duration<double>(t1 - t0).count()},
                 {"fma", std::chrono::duration<double>(t2 - t1).count()}}}};
  return c;
}

}  // namespace ekb::runtime
