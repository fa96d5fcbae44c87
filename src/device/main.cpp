// ekb-device: the program a device runs (docs/DEVICES.md). It holds only what running kernels there
// needs, so that it builds for any target clang and glibc reach (EKB_DEVICE_ONLY, a cross build):
//   ekb-device worker ...   the sandboxed kernel worker, the same as `ekb worker` (cli/worker.cpp)
//   ekb-device info         what this device is, as JSON: architecture, kernel, glibc, vector lengths
//   ekb-device serve        the agent the host reaches over ssh: framed requests on stdin (serve.h)
#include <gnu/libc-version.h>
#include <sys/prctl.h>
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

#if defined(__riscv)
#include <setjmp.h>
#include <signal.h>
#endif

#include "device/serve.h"
#include "ir/target.h"
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


// SVE's vector length in bits for this process (PR_SVE_GET_VL); null without SVE.
json sve_vector_bits() {
#if defined(__aarch64__) && defined(PR_SVE_GET_VL) && defined(PR_SVE_VL_LEN_MASK)
  const int r = ::prctl(PR_SVE_GET_VL, 0, 0, 0, 0);
  if (r > 0) return (r & PR_SVE_VL_LEN_MASK) * 8;
#endif
  return nullptr;
}

#if defined(__riscv)
sigjmp_buf g_no_vector;
void on_sigill(int) { siglongjmp(g_no_vector, 1); }
#endif

// RVV's VLEN in bits (the vlenb CSR times 8); null without the V extension. Read, not taken from
// AT_HWCAP, which qemu-user does not set for V: an illegal-instruction trap means no V.
json rvv_vector_bits() {
#if defined(__riscv) && __riscv_xlen == 64
  struct sigaction trap = {}, old = {};
  trap.sa_handler = on_sigill;
  sigemptyset(&trap.sa_mask);
  if (::sigaction(SIGILL, &trap, &old) != 0) return nullptr;
  unsigned long vlenb = 0;
  if (sigsetjmp(g_no_vector, 1) == 0) asm volatile("csrr %0, 0xc22" : "=r"(vlenb));  // 0xc22: vlenb
  ::sigaction(SIGILL, &old, nullptr);
  if (vlenb) return static_cast<uint64_t>(vlenb) * 8;
#endif
  return nullptr;
}

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
  j["sve_vl_bits"] = sve_vector_bits();
  j["rvv_vlen_bits"] = rvv_vector_bits();
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
