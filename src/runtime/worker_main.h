// The worker process's side: what `ekb worker` runs. It confines itself (runtime/sandbox.h),
// installs the crash reporter, then serves the parent's requests (runtime/worker_protocol.h) until
// told to quit or the parent goes away. Candidate code only ever runs in here.
#pragma once
#include <string>
#include <vector>

#include "ir/target.h"
#include "runtime/device_selection.h"
#include "runtime/sandbox.h"

namespace ekb::runtime {

struct WorkerConfig {
  int socket_fd = 3;
  ir::Target backend = ir::Target::Cpu;
  DeviceSelection device;  // where the executor runs kernels: the backend's choice
  SandboxConfig sandbox;
};

// The exit code of a worker whose connection to the parent broke while it still had work to
// answer (e.g. a candidate closed its descriptor): the parent reports a crash, not an exit().
constexpr int kWorkerLostConnection = 86;
// The exit code of a worker whose device context broke (a sticky CUDA error), after its reply.
constexpr int kWorkerDeviceFault = 87;

// Returns the process exit code.
int worker_main(const WorkerConfig& config);

// The worker's command line after its subcommand, as Worker writes it (runtime/worker.cpp):
// --fd N --backend B [--platform P --device D] --scratch DIR --memory-limit N --file-limit N
// --parent-pid N [--uid N --gid N] [--no-seccomp]. Read here, beside the code that writes it, for
// every program that runs workers (`ekb worker`, `ekb-device worker`). Throws
// std::invalid_argument naming the argument that is wrong.
WorkerConfig parse_worker_arguments(const std::vector<std::string>& args);

}  // namespace ekb::runtime
