// Running a trusted tool (the compiler) as a child process: arguments without a shell, combined
// stdout+stderr captured, a wall-clock limit, and an address-space limit so that a pathological
// source (template bombs, `#include </dev/zero>`) cannot take the machine down with it.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace ekb::runtime {

struct CommandResult {
  bool started = false;     // false: fork/exec failed (see output)
  int exit_code = -1;       // when it exited
  int term_signal = 0;      // when a signal ended it
  bool timed_out = false;   // killed by us at the time limit
  std::string output;       // stdout and stderr, interleaved, at most max_output bytes
  double seconds = 0;
  bool ok() const { return started && !timed_out && term_signal == 0 && exit_code == 0; }
};

struct CommandOptions {
  double timeout_s = 120;
  uint64_t memory_limit_bytes = 0;  // RLIMIT_AS; 0: none
  std::string cwd;                  // empty: inherit
  size_t max_output = 1 << 20;
  int echo_fd = -1;  // >= 0: the output is also written here as it arrives (a long child's progress)
};

// argv[0] is looked up in PATH. Never throws.
CommandResult run_command(const std::vector<std::string>& argv, const CommandOptions& options = {});

}  // namespace ekb::runtime
