// Where the runtime finds its files, so that `ekb` works from any working directory: the kernel ABI
// header that every cpu solution is compiled with, the compile cache, and the worker executable.
#pragma once
#include <string>

namespace ekb::runtime {

// Directory of the running executable (/proc/self/exe), without a trailing slash.
std::string executable_dir();

// include/ekb/ekb_abi.h: $EKB_ABI_HEADER if set; else next to the executable in an installed
// layout (<exe>/../include/ekb/) or a build tree (<exe>/../../include/ekb/, <exe>/../include/ekb/);
// else the source tree ekb was built from (EKB_SOURCE_DIR). Throws std::runtime_error if none exists.
std::string abi_header_path();

// $EKB_CACHE_DIR, else $XDG_CACHE_HOME/ekb, else ~/.cache/ekb. Not created here.
std::string default_cache_dir();

// The program started as a worker (`PROGRAM worker ...`): $EKB_WORKER if set; else this process's
// executable when it is `ekb` or `ekb-device`; else an `ekb` next to the executable or one
// directory up (the test binary lives in build/tests/, ekb in build/). Throws std::runtime_error if
// none exists.
std::string default_worker_executable();

// Creates `dir` and its parents (mode 0755); throws std::runtime_error on failure.
void make_directories(const std::string& dir);

// Writes `text` to `path` through a temporary file and a rename, so that a killed writer leaves the
// file whole or absent; creates the directory. Throws std::runtime_error.
void write_file_atomically(const std::string& path, const std::string& text);

}  // namespace ekb::runtime
