// ekb calibrate: measures the device's roofline (memory bandwidth, peak FP32 rate) and stores it
// in the results database and the cache directory, where reports look it up by backend and device.
// cpu: runtime/cpu_calibration.h; cuda: eval/cuda_calibration.h; opencl: eval/opencl_calibration.h;
// --device NAME: a remote device's cpu, measured there by its ekb-device (serve's `calibrate`).
#include <fmt/core.h>

#include <nlohmann/json.hpp>

#include <optional>

#include "cli/commands.h"
#include "cli/devices.h"
#include "cli/results_db.h"
#include "eval/cuda_calibration.h"
#include "eval/opencl_calibration.h"
#include "results/calibration_cache.h"
#include "runtime/cpu_backend.h"
#include "runtime/cpu_calibration.h"

namespace ekb::cli {

namespace {

struct CalibrateOptions {
  ir::Target backend = ir::Target::Cpu;
  std::string db;
  bool no_db = false;
  bool json = false;
  bool quick = false;
  bool if_missing = false;
  int threads = 0;
  int device = 0;
  std::string platform;
  std::string device_name;   // --device NAME: a remote device of the devices file
  std::string devices_file;  // --devices
};

// A remote device's calibration can take minutes on a small board (its arrays are sized to its
// memory); past this the link counts as lost.
constexpr double kRemoteCalibrationTimeoutS = 1800;

std::string spread_line(const runtime::Measurement& m, const char* unit) {
  return fmt::format("best of {}; median {:.1f}, worst {:.1f} {}, spread {:.1f}%", m.runs, m.median, m.worst, unit,
                     m.spread() * 100);
}

// Best of each kernel in a details object {"name": {"best": ...}, ...}: "copy 1.0, triad 2.0".
std::string best_of_each(const nlohmann::json& kernels, const std::vector<std::pair<std::string, std::string>>& names) {
  std::string out;
  for (const auto& [key, label] : names)
    if (kernels.contains(key))
      out += fmt::format("{}{} {:.1f}", out.empty() ? "" : ", ", label, kernels[key]["best"].get<double>());
  return out;
}

void print_calibration(const runtime::Calibration& c) {
  const auto& d = c.details;
  const std::string quick = d.value("quick", false) ? ", quick: numbers not meaningful" : "";
  if (ir::parse_target(c.backend) == ir::Target::Cpu)
    fmt::print("{}: {}, {} threads{}\n", c.backend, c.device, d.value("threads", 0), quick);
  else
    fmt::print("{}: {}{}\n", c.backend, c.device, quick);
  fmt::print("  memory bandwidth  {:8.1f} GB/s      ({})\n", c.bandwidth_gbs.best, spread_line(c.bandwidth_gbs, "GB/s"));
  if (d.contains("stream")) {
    const auto& s = d["stream"];
    fmt::print("    copy {:.1f} GB/s, triad {:.1f} GB/s over 3 x {:.0f} MiB arrays (last-level cache {:.0f} MiB)\n",
               s["copy_gbs"]["best"].get<double>(), s["triad_gbs"]["best"].get<double>(),
               s["array_bytes"].get<double>() / (1 << 20), s["last_level_cache_bytes"].get<double>() / (1 << 20));
    if (s.contains("copy_streaming_gbs") && s["copy_streaming_gbs"].value("runs", 0) > 0)
      fmt::print("    with streaming stores (no read of the written lines): copy {:.1f} GB/s, triad {:.1f} GB/s\n",
                 s["copy_streaming_gbs"]["best"].get<double>(), s["triad_streaming_gbs"]["best"].get<double>());
  }
  if (d.contains("bandwidth")) {  // cuda, opencl
    const auto& b = d["bandwidth"];
    const double cache_bytes = d.value("l2_bytes", d.value("global_cache_bytes", 0.0));
    fmt::print("    {} GB/s over {:.0f} MiB arrays (cache {:.0f} MiB); bytes read + written\n",
               best_of_each(b, {{"copy_kernel_gbs", "copy kernel"}, {"triad_kernel_gbs", "triad kernel"},
                                {"memcpy_gbs", "cuMemcpyDtoD"}}),
               b["array_bytes"].get<double>() / (1 << 20), cache_bytes / (1 << 20));
  }
  if (c.read_bandwidth_gbs.runs > 0)
    fmt::print("  reads alone       {:8.1f} GB/s      ({}; the roof of a kernel's reads)\n", c.read_bandwidth_gbs.best,
               spread_line(c.read_bandwidth_gbs, "GB/s"));
  fmt::print("  peak FP32         {:8.1f} GFLOP/s   ({})\n", c.peak_gflops.best, spread_line(c.peak_gflops, "GFLOP/s"));
  if (d.contains("fma_gflops")) {
    std::string variants;
    for (const auto& [isa, m] : d["fma_gflops"].items())
      variants += fmt::format("{}{} {:.1f}", variants.empty() ? "" : ", ", isa, m["best"].get<double>());
    fmt::print("    by SIMD variant: {} GFLOP/s\n", variants);
  }
  if (d.contains("fp16x2_fma_gflops")) {
    const auto m = runtime::measurement_from_json(d["fp16x2_fma_gflops"]);
    fmt::print("  peak FP16 (half2) {:8.1f} GFLOP/s   ({}; not a roof: workloads are charged at the FP32 rate)\n",
               m.best, spread_line(m, "GFLOP/s"));
  }
  if (d.contains("launch")) {  // cuda, opencl
    std::string cells;
    for (const auto& [queue, t] : d["launch"]["empty_kernel_us"].items())
      cells += fmt::format("{}{} {:.1f} us ({:.1f}-{:.1f})", cells.empty() ? "" : ", ", queue, t["median"].get<double>(),
                           t["p25"].get<double>(), t["p75"].get<double>());
    fmt::print("  launch floor      {}\n    (empty kernels, median (IQR) of {}: the fixed cost in every timed call)\n",
               cells, d["launch"]["runs"].get<int>());
  }
  fmt::print("  ridge point       {:8.1f} FLOP/byte (kernels below it are memory bound)\n",
             c.peak_gflops.best / c.bandwidth_gbs.best);
}

// The measurement itself; on cuda an exception says why the device cannot be calibrated.
runtime::Calibration measure(const CalibrateOptions& o) {
  if (o.backend == ir::Target::Cpu) {
    runtime::CpuCalibrationOptions options;
    options.quick = o.quick;
    options.threads = o.threads;
    if (!o.json) fmt::print("measuring memory bandwidth and peak FP32 rate on all cores...\n");
    std::fflush(stdout);
    return runtime::calibrate_cpu(options);
  }
  if (o.backend == ir::Target::Cuda) {
    eval::CudaCalibrationOptions options;
    options.quick = o.quick;
    options.device = o.device;
    if (!o.json) fmt::print("measuring device memory bandwidth and peak FP32/FP16 rates on CUDA device {}...\n", o.device);
    std::fflush(stdout);
    try {
      return eval::calibrate_cuda(options);
    } catch (const std::runtime_error& e) {
      throw UsageError(std::string("cannot calibrate the cuda backend: ") + e.what());
    }
  }
  eval::OpenCLCalibrationOptions options;
  options.quick = o.quick;
  options.device = {o.platform, o.device};
  if (!o.json) fmt::print("measuring device memory bandwidth and peak FP32 rate on OpenCL device {}{}...\n", o.device,
                          o.platform.empty() ? "" : " of platform '" + o.platform + "'");
  std::fflush(stdout);
  try {
    return eval::calibrate_opencl(options);
  } catch (const std::runtime_error& e) {
    throw UsageError(std::string("cannot calibrate the opencl backend: ") + e.what());
  }
}

// The remote device to calibrate, connected: one that can be timed (not emulated) and runs the cpu
// backend.
DeviceConnection open_device_to_calibrate(const CalibrateOptions& o) {
  DeviceConnection remote;
  remote.device = find_device(o.devices_file, o.device_name);
  if (o.backend != ir::Target::Cpu) throw UsageError("a remote device is calibrated for the cpu backend only, for now");
  if (remote.device.emulated)
    throw UsageError(fmt::format("device {} is emulated (`emulated = true`): times under an emulator measure the emulator, "
                                 "so it has no roofline to calibrate\n  hint: calibrate the board itself",
                                 o.device_name));
  remote.open();
  return remote;
}

// The device's own measurement, stored under its key (name and hello facts), never this host's.
runtime::Calibration measure_on_device(DeviceConnection& remote, const CalibrateOptions& o) {
  if (!o.json)
    fmt::print("measuring memory bandwidth and peak FP32 rate on all cores of device {}...\n", remote.device.name);
  std::fflush(stdout);
  runtime::framed::Frame reply;
  try {
    reply = remote.link->request({{"op", "calibrate"}, {"quick", o.quick}, {"threads", o.threads}}, {},
                                 kRemoteCalibrationTimeoutS);
  } catch (const runtime::DeviceLost& e) {
    throw UsageError(fmt::format("device {}: lost while calibrating: {}", remote.device.name, e.what()));
  }
  if (!reply.header.value("ok", false))
    throw UsageError(fmt::format("device {} cannot calibrate: {}", remote.device.name, reply.header.value("message", reply.header.dump())));
  runtime::Calibration c = runtime::calibration_from_json(reply.header.at("calibration"));
  c.details["device_cpu"] = c.device;  // what the device calls its CPU
  c.details["remote"] = remote.device.name;
  c.device = remote.key();
  return c;
}

void run_calibrate(const CalibrateOptions& o) {
  std::optional<DeviceConnection> remote;
  if (!o.device_name.empty()) remote = open_device_to_calibrate(o);
  else if (!o.devices_file.empty()) throw UsageError("--devices names the file of remote devices; --device NAME picks one");
  if (o.if_missing) {
    if (o.backend != ir::Target::Cpu) throw UsageError("--if-missing is for the cpu backend (a GPU is named by its backend)");
    auto stored = results::load_calibration_file("cpu", remote ? remote->key() : runtime::cpu_model_name());
    if (stored && runtime::is_current(*stored)) {
      if (!o.json)
        fmt::print("a current calibration of {} is stored ({}): not measured again\n",
                   remote ? "device " + remote->device.name : std::string("this CPU"), stored->created);
      return;
    }
  }
  runtime::Calibration c = remote ? measure_on_device(*remote, o) : measure(o);
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
    fmt::print("{}\n", runtime::to_json(c).dump(2));
    return;
  }
  print_calibration(c);
  fmt::print("stored in {}\n", stored_in);
}

}  // namespace

void add_calibrate_command(CLI::App& app, Context& ctx) {
  auto o = std::make_shared<CalibrateOptions>();
  CLI::App* cmd = app.add_subcommand("calibrate", "Measure this device's memory bandwidth and peak FP32 rate (the roofline)");
  add_target_option(cmd, "-b,--backend", o->backend, "Backend to calibrate");
  add_db_option(cmd, o->db);
  cmd->add_flag("--no-db", o->no_db, "Only write the cache file, not the database");
  cmd->add_option("--threads", o->threads, "Threads to measure with (default: all hardware threads)");
  add_device_index_or_name_option(cmd, [o](int index) { o->device = index; }, o->device_name,
                                  "cuda: the CUDA device ordinal; opencl: the device's index in its platform (default "
                                  "0); a name: the remote device of that name in the devices file, measured there "
                                  "(--devices; docs/DEVICES.md)");
  cmd->add_option("--devices", o->devices_file,
                  "The remote devices' file for --device NAME (default: $EKB_DEVICES, else ./ekb-devices.toml)");
  cmd->add_option("--platform", o->platform,
                  "opencl: a case-insensitive substring of the platform's name (default: the first with a device)");
  cmd->add_flag("--quick", o->quick, "Tiny buffers and short runs, to check that it works (numbers not meaningful)");
  cmd->add_flag("--json", o->json, "Print the calibration as JSON");
  cmd->add_flag("--if-missing", o->if_missing,
                "cpu: measure only when no calibration of this CPU by the current method is stored");
  cmd->callback([o] { run_calibrate(*o); });
}

}  // namespace ekb::cli
