// One compiler run into the compile cache, shared by the backends' compile(): the source written to
// a private file, the compiler run under time and memory limits, the artifact published under its
// key, or the compiler's diagnostics (with the temporary path replaced by the solution's name).
#pragma once
#include <chrono>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/backend.h"
#include "runtime/compile_cache.h"
#include "runtime/subprocess.h"

namespace ekb::runtime {

// A check the harness appends to a source (eval/element_type_check.h) fails with a static
// assertion whose message starts with this marker; the outcome's message is then that sentence.
inline constexpr std::string_view kCheckFailureMarker = "ekb-check: ";

struct CompilerInvocation {
  std::vector<std::string> head;  // the compiler and its flags: run as head + {-o, OUT, SRC} + tail
  std::vector<std::string> tail;  // what must follow the source (libraries)
  std::string source_ext;         // ".c", ".cpp", ".cu"
  std::string artifact_ext;       // ".so"
  CommandOptions command;
};

// Serves `key` from the cache or compiles `source` into it. `started`: when compile() began (for
// CompileOutcome::seconds). Throws std::runtime_error only when the compiler cannot be started.
CompileOutcome compile_into_cache(const CompileCache& cache, const std::string& backend, const std::string& key,
                                  const Source& source, const CompilerInvocation& compiler,
                                  std::chrono::steady_clock::time_point started);

// The first compiler errors of a log, for a result's message: from the first "error:" line, at
// most `max_lines` lines and `max_chars` characters; the whole (short) log if it has no error line.
std::string trim_compiler_log(const std::string& log, int max_lines = 12, size_t max_chars = 1500);

}  // namespace ekb::runtime
