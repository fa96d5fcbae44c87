// `ekb-device serve`: the device's agent (docs/DEVICES.md, "The serve protocol"). It reads
// requests framed on stdin (runtime/framed_stream.h), runs ordinary sandboxed local workers
// (runtime/worker.h) and answers on stdout, until stdin closes (ssh's connection went away).
//
// It is trusted harness code, like the evaluator on the host: it writes inputs into the worker's
// arena (from seeds, ir/inputs.h, or as sent), poisons outputs, and after every call checks the
// canaries, the inputs and the window after the call, then sends the outputs back. The references
// and the output comparison stay on the host.
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace ekb::device {

struct ServeOptions {
  int in_fd = 0;
  int out_fd = 1;
  // Workers start as prefix + this program + `worker ...`: an emulator when this program itself
  // runs under qemu-user without binfmt_misc, which could not exec a foreign binary otherwise.
  std::vector<std::string> worker_prefix;
  std::string cache_dir;  // artifacts by content hash; empty: <runtime::default_cache_dir()>/device-artifacts
};

// Returns the exit code: 0 when stdin closed between requests, 1 on a broken stream.
int serve(const ServeOptions& options, const nlohmann::json& device_info);

}  // namespace ekb::device
