// Roofline fractions and the calibration record.
#include <gtest/gtest.h>

#include "eval/launch_floor.h"
#include "eval/roofline.h"
#include "runtime/calibration.h"
#include "runtime/cpu_backend.h"
#include "runtime/cpu_calibration.h"

namespace ekb::eval {
namespace {

using runtime::Calibration;
using runtime::CpuCalibrationOptions;
using runtime::calibrate_cpu;
using runtime::calibration_from_json;
using runtime::calibration_method;
using runtime::summarize_higher_is_better;
using runtime::utc_timestamp_now;

TEST(Roofline, AttainableTimeIsTheBindingRoof) {
  Roofline roof{100e9, 10e9};  // 100 GFLOP/s, 10 GB/s: ridge at 10 FLOP/byte
  WorkCost memory{1e9, 1e9};   // 1 FLOP/byte: 0.01 s compute, 0.1 s traffic
  EXPECT_DOUBLE_EQ(attainable_seconds(memory, roof), 0.1);
  EXPECT_TRUE(memory_bound(memory, roof));
  WorkCost compute{100e9, 1e9};  // 100 FLOP/byte: 1 s compute, 0.1 s traffic
  EXPECT_DOUBLE_EQ(attainable_seconds(compute, roof), 1.0);
  EXPECT_FALSE(memory_bound(compute, roof));
  // Measured 400 ms for 100 ms attainable: a quarter of the roofline.
  EXPECT_DOUBLE_EQ(*roofline_fraction(memory, roof, 400.0), 0.25);
  EXPECT_DOUBLE_EQ(*roofline_fraction(compute, roof, 1000.0), 1.0);
  EXPECT_FALSE(roofline_fraction(memory, roof, 0.0).has_value());
  EXPECT_FALSE(roofline_fraction(memory, Roofline{}, 1.0).has_value());
}

// Where the calibration measured reads alone, a kernel's reads cannot go faster than that: a GEMV
// that reads 1 GB and writes nothing is bound by the read rate, a copy by the copy rate.
TEST(Roofline, ReadsAloneHaveTheirOwnRoof) {
  Roofline roof{100e9, 40e9, 25e9};
  WorkCost gemv{0.5e9, 1e9, 1e9};  // reads only: 1 GB at 25 GB/s
  EXPECT_DOUBLE_EQ(attainable_seconds(gemv, roof), 1.0 / 25);
  WorkCost copy{0, 2e9, 1e9};      // 1 GB in, 1 GB out: 2 GB at 40 GB/s binds
  EXPECT_DOUBLE_EQ(attainable_seconds(copy, roof), 2.0 / 40);
  EXPECT_TRUE(memory_bound(gemv, roof));
  // No read roof measured (a GPU, an older calibration): the total alone.
  EXPECT_DOUBLE_EQ(attainable_seconds(gemv, Roofline{100e9, 40e9}), 1.0 / 40);
  Calibration c;
  c.bandwidth_gbs = summarize_higher_is_better({40});
  c.peak_gflops = summarize_higher_is_better({100});
  EXPECT_DOUBLE_EQ(Roofline::from(c).read_bandwidth_bytes_per_s, 0);
  c.read_bandwidth_gbs = summarize_higher_is_better({24, 25});
  EXPECT_DOUBLE_EQ(Roofline::from(c).read_bandwidth_bytes_per_s, 25e9);
  Calibration back = calibration_from_json(nlohmann::json::parse(to_json(c).dump()));
  EXPECT_DOUBLE_EQ(back.read_bandwidth_gbs.best, 25);
}

TEST(Roofline, FromCalibrationUsesTheBestRuns) {
  Calibration c;
  c.bandwidth_gbs = summarize_higher_is_better({9, 10, 8});
  c.peak_gflops = summarize_higher_is_better({300, 400, 350, 390});
  Roofline r = Roofline::from(c);
  EXPECT_DOUBLE_EQ(r.bandwidth_bytes_per_s, 10e9);
  EXPECT_DOUBLE_EQ(r.peak_ops_per_s, 400e9);
  EXPECT_DOUBLE_EQ(c.peak_gflops.median, 370);
  EXPECT_DOUBLE_EQ(c.peak_gflops.worst, 300);
  EXPECT_DOUBLE_EQ(c.peak_gflops.spread(), 0.25);
  EXPECT_EQ(c.peak_gflops.runs, 4);
}

TEST(Calibration, JsonRoundTrip) {
  Calibration c;
  c.backend = "cpu";
  c.device = "Some CPU";
  c.created = utc_timestamp_now();
  c.bandwidth_gbs = summarize_higher_is_better({9, 10});
  c.peak_gflops = summarize_higher_is_better({300, 400});
  c.details = {{"threads", 2}};
  Calibration back = calibration_from_json(nlohmann::json::parse(to_json(c).dump()));
  EXPECT_EQ(back.device, "Some CPU");
  EXPECT_EQ(back.created, c.created);
  EXPECT_DOUBLE_EQ(back.bandwidth_gbs.best, 10);
  EXPECT_DOUBLE_EQ(back.peak_gflops.worst, 300);
  EXPECT_EQ(back.details["threads"], 2);
}

TEST(Calibration, QuickCpuCalibrationMeasuresSomething) {
  CpuCalibrationOptions o;
  o.quick = true;
  Calibration c = calibrate_cpu(o);
  EXPECT_EQ(c.backend, "cpu");
  EXPECT_EQ(c.device, runtime::cpu_model_name());
  EXPECT_GT(c.bandwidth_gbs.best, 0.1);
  EXPECT_GT(c.peak_gflops.best, 0.1);
  EXPECT_GE(c.bandwidth_gbs.best, c.bandwidth_gbs.worst);
  EXPECT_TRUE(c.details["fma_gflops"].contains("generic"));  // every CPU runs the fallback
  // The roof is the best of the plain and the streaming-store STREAM kernels.
  const auto& s = c.details["stream"];
  double best = 0;
  for (const char* k : {"copy_gbs", "triad_gbs", "copy_streaming_gbs", "triad_streaming_gbs"}) {
    ASSERT_TRUE(s.contains(k)) << k;
    best = std::max(best, s[k]["best"].get<double>());
  }
  EXPECT_DOUBLE_EQ(c.bandwidth_gbs.best, best);
  EXPECT_GT(c.read_bandwidth_gbs.runs, 0);
  EXPECT_GT(c.read_bandwidth_gbs.best, 0.1);
#if defined(__x86_64__)
  EXPECT_GT(s["copy_streaming_gbs"]["runs"].get<int>(), 0);
#endif
  EXPECT_TRUE(is_current(c));
}

// A cpu calibration measured before the streaming-store kernels (no method stamp) is not current,
// so it is neither used for rooflines nor kept by `ekb calibrate --if-missing`; GPU calibrations
// have not changed method.
TEST(Calibration, OlderCpuMethodIsNotCurrent) {
  Calibration old;
  old.backend = "cpu";
  old.details = {{"threads", 2}};
  EXPECT_FALSE(is_current(old));
  old.details["method"] = calibration_method(ir::Target::Cpu);
  EXPECT_TRUE(is_current(old));
  Calibration gpu;
  gpu.backend = "cuda";
  EXPECT_TRUE(is_current(gpu));
}

// The launch floor's statistics are those of the timings it is given, in microseconds, each way of
// launching its own (they are interleaved, after one warm-up call of each).
TEST(Calibration, LaunchFloorSummarizesBothQueuesInMicroseconds) {
  int idle_calls = 0, flush_calls = 0;
  const nlohmann::json j = launch_floor_json(
      4, {{"idle", [&] { return 0.001 * ++idle_calls; }}, {"after_flush", [&] { return 0.010 * ++flush_calls; }}});
  EXPECT_EQ(idle_calls, 5);
  EXPECT_EQ(flush_calls, 5);
  EXPECT_EQ(j["runs"].get<int>(), 4);
  // Timed calls 2..5 (the first is the warm-up): 2, 3, 4, 5 us and 20, 30, 40, 50 us.
  EXPECT_NEAR(j["empty_kernel_us"]["idle"]["median"].get<double>(), 3.5, 1e-9);
  EXPECT_NEAR(j["empty_kernel_us"]["after_flush"]["median"].get<double>(), 35.0, 1e-9);
  EXPECT_LT(j["empty_kernel_us"]["after_flush"]["p25"].get<double>(), 35.0);
  EXPECT_GT(j["empty_kernel_us"]["after_flush"]["p75"].get<double>(), 35.0);
}

}  // namespace
}  // namespace ekb::eval
