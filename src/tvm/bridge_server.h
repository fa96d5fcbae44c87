// The TVM bridge kept running (`python -m ekb_tvm serve`): importing tvm costs about 1.5 s of CPU,
// more than most compiles, so an ekb process starts the bridge once and sends it every request.
// A bridge that dies or runs past its time limit is killed (with its process group: MetaSchedule's
// builders) and the next request starts a new one. Requests from several threads each get a
// bridge of their own (an idle one is reused): compiles stay as parallel as with one-shot runs.
#pragma once
#include <string>

#include "runtime/subprocess.h"

namespace ekb::tvm {

struct BridgeCommand {
  std::string python;      // the environment's interpreter
  std::string bridge_dir;  // the working directory: the ekb_tvm package's parent
};

// Answers REQUEST (a file) into RESULT with a running bridge for `command`. The outcome reads like
// runtime::run_command's: started false when no bridge could start, timed_out when it ran past
// `timeout_s`, a nonzero exit when it died; `output` is then the tail of what the bridge printed.
// Never throws.
runtime::CommandResult bridge_request(const BridgeCommand& command, const std::string& request_path,
                                      const std::string& result_path, double timeout_s);

}  // namespace ekb::tvm
