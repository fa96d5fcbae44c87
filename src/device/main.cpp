// ekb-device: the program a device runs (docs/DEVICES.md). It holds only what running kernels there
// needs, so that it builds for any target clang and glibc reach (EKB_DEVICE_ONLY, a cross build):
//   ekb-device worker ...   the sandboxed kernel worker, the same as `ekb worker` (cli/worker.cpp)
//   ekb-device info         what this device is, as JSON: architecture, kernel, glibc, CPU features, vector lengths
//   ekb-device serve        the agent the host reaches over ssh: framed requests on stdin (serve.h)
#include <gnu/libc-version.h>
#include <sys/utsname.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <exception>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "device/serve.h"
#include "ir/target.h"
#include "runtime/cpu_features.h"
#include "runtime/cpu_target.h"
#include "runtime/device_link.h"
#include "runtime/worker_main.h"

namespace ekb::device {
namespace {

using json = nlohmann::ordered_json;  // keys in the order written

// The architecture this program was compiled for, from the compiler's macros (its triple:
// runtime::build_triple()).
constexpr const char* kArch =
#if defined(__x86_64__)
    "x86_64";
#elif defined(__aarch64__)
    "aarch64";
#elif defined(__riscv) && __riscv_xlen == 64
    "riscv64";
#elif defined(__arm__)
    "arm";
#elif defined(__i386__)
    "i386";
#else
    "unknown";
#endif


json device_info() {
  json j;
  j["program"] = "ekb-device 0.1";
  j["triple"] = runtime::build_triple();
  j["arch"] = kArch;
  struct utsname u {};
  if (::uname(&u) == 0) {
    j["machine"] = u.machine;
    j["kernel"] = std::string(u.sysname) + " " + u.release;
  } else {
    j["machine"] = j["kernel"] = nullptr;
  }
  j["glibc"] = gnu_get_libc_version();
  j["cores"] = std::thread::hardware_concurrency();
  // The CPU's model, features and vector lengths: what the host checks a target against.
  const nlohmann::json cpu = runtime::this_cpu_facts();  // named: items() does not keep a temporary alive
  for (const auto& [key, value] : cpu.items()) j[key] = value;
  return j;
}

// `worker`: the same arguments and the same runtime::worker_main as `ekb worker` (cli/worker.cpp),
// read by runtime::parse_worker_arguments.
void add_worker_command(CLI::App& app, int& exit_code) {
  CLI::App* cmd = app.add_subcommand(
      "worker", "Run kernels for the harness: the worker protocol on an inherited socket (internal; "
                "the arguments of runtime/worker_main.h)");
  cmd->allow_extras();
  cmd->callback([cmd, &exit_code] {
    try {
      exit_code = runtime::worker_main(runtime::parse_worker_arguments(cmd->remaining()));
    } catch (const std::invalid_argument& e) {
      throw CLI::ValidationError(e.what());
    }
  });
}

// `serve`. Its options belong to the program, before `serve`, because the host appends
// `serve` to the device's command line (docs/DEVICES.md): `qemu-aarch64-static -L /usr/aarch64-linux-gnu
// ekb-device --worker-prefix 'qemu-aarch64-static -L /usr/aarch64-linux-gnu'` then runs as configured.
void add_serve_command(CLI::App& app, int& exit_code) {
  auto prefix = std::make_shared<std::string>();
  auto cache = std::make_shared<std::string>();
  app.add_option("--worker-prefix", *prefix,
                 "serve: start workers under this command line (an emulator: 'qemu-aarch64-static -L "
                 "/usr/aarch64-linux-gnu' when this program itself runs under qemu-user without binfmt_misc)");
  app.add_option("--cache", *cache,
                 "serve: where artifacts are kept by content hash (default: <cache dir>/device-artifacts)");
  CLI::App* cmd = app.add_subcommand(
      "serve", "Serve the host's evaluation requests on stdin/stdout until stdin closes (what `ekb eval --device` "
               "starts over ssh; docs/DEVICES.md)");
  cmd->callback([prefix, cache, &exit_code] {
    ServeOptions o;
    o.worker_prefix = runtime::split_command_line(*prefix);
    o.cache_dir = *cache;
    exit_code = serve(o, device_info());
  });
}

}  // namespace
}  // namespace ekb::device

int main(int argc, char** argv) {
  using namespace ekb::device;
  CLI::App app{"ekb-device: runs EdgeKernelBench's kernel workers on a device (docs/DEVICES.md)", "ekb-device"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("ekb-device 0.1"));
  int exit_code = 0;
  add_worker_command(app, exit_code);
  add_serve_command(app, exit_code);
  app.add_subcommand("info", "Print what this device is, as JSON: triple, machine, kernel, glibc, vector lengths")
      ->callback([] { std::printf("%s\n", device_info().dump(2).c_str()); });
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ekb-device: error: %s\n", e.what());
    return 1;
  }
  return exit_code;
}
