// ekb calibrate: measures the device's roofline (memory bandwidth, peak FP32 rate) and stores it
// in the results database and the cache directory, where reports look it up by backend and device.
#include <fmt/core.h>

#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/results_db.h"
#include "eval/cpu_calibration.h"
#include "results/calibration_cache.h"

namespace ekb::cli {

namespace {

struct CalibrateOptions {
  std::string backend = "cpu";
  std::string db;
  bool no_db = false;
  bool json = false;
  bool quick = false;
  int threads = 0;
};

std::string spread_line(const eval::Measurement& m, const char* unit) {
  return fmt::format("best of {}; median {:.1f}, worst {:.1f} {}, spread {:.1f}%", m.runs, m.median, m.worst, unit,
                     m.spread() * 100);
}

void print_calibration(const eval::Calibration& c) {
  const auto& d = c.details;
  fmt::print("{}: {}, {} threads{}\n", c.backend, c.device, d.value("threads", 0),
             d.value("quick", false) ? ", quick: numbers not meaningful" : "");
  fmt::print("  memory bandwidth  {:8.1f} GB/s      ({})\n", c.bandwidth_gbs.best, spread_line(c.bandwidth_gbs, "GB/s"));
  if (d.contains("stream")) {
    const auto& s = d["stream"];
    fmt::print("    copy {:.1f} GB/s, triad {:.1f} GB/s over 3 x {:.0f} MiB arrays (last-level cache {:.0f} MiB)\n",
               s["copy_gbs"]["best"].get<double>(), s["triad_gbs"]["best"].get<double>(),
               s["array_bytes"].get<double>() / (1 << 20), s["last_level_cache_bytes"].get<double>() / (1 << 20));
  }
  fmt::print("  peak FP32         {:8.1f} GFLOP/s   ({})\n", c.peak_gflops.best, spread_line(c.peak_gflops, "GFLOP/s"));
  if (d.contains("fma_gflops")) {
    std::string variants;
    for (const auto& [isa, m] : d["fma_gflops"].items())
      variants += fmt::format("{}{} {:.1f}", variants.empty() ? "" : ", ", isa, m["best"].get<double>());
    fmt::print("    by SIMD variant: {} GFLOP/s\n", variants);
  }
  fmt::print("  ridge point       {:8.1f} FLOP/byte (kernels below it are memory bound)\n",
             c.peak_gflops.best / c.bandwidth_gbs.best);
}

void run_calibrate(const CalibrateOptions& o) {
  if (o.backend != "cpu")
    throw UsageError("calibrate measures the cpu backend only so far\n  hint: --backend cpu");
  eval::CpuCalibrationOptions options;
  options.quick = o.quick;
  options.threads = o.threads;
  if (!o.json) fmt::print("measuring memory bandwidth and peak FP32 rate on all cores...\n");
  std::fflush(stdout);
  eval::Calibration c = eval::calibrate_cpu(options);
  std::string file = results::save_calibration_file(c);
  std::string stored_in = file;
  if (!o.no_db) {
    try {
      results::ResultStore::open(o.db).add_calibration(c);
      stored_in = o.db + " and " + file;
    } catch (const results::StoreError& e) {
      throw UsageError(e.what());
    }
  }
  if (o.json) {
    fmt::print("{}\n", eval::to_json(c).dump(2));
    return;
  }
  print_calibration(c);
  fmt::print("stored in {}\n", stored_in);
}

}  // namespace

void add_calibrate_command(CLI::App& app, Context& ctx) {
  auto o = std::make_shared<CalibrateOptions>();
  CLI::App* cmd = app.add_subcommand("calibrate", "Measure this device's memory bandwidth and peak FP32 rate (the roofline)");
  cmd->add_option("-b,--backend", o->backend, "Backend to calibrate")->check(CLI::IsMember({"cpu", "cuda", "opencl"}))
      ->capture_default_str();
  add_db_option(cmd, o->db);
  cmd->add_flag("--no-db", o->no_db, "Only write the cache file, not the database");
  cmd->add_option("--threads", o->threads, "Threads to measure with (default: all hardware threads)");
  cmd->add_flag("--quick", o->quick, "Tiny buffers and short runs, to check that it works (numbers not meaningful)");
  cmd->add_flag("--json", o->json, "Print the calibration as JSON");
  cmd->callback([o] { run_calibrate(*o); });
}

}  // namespace ekb::cli
