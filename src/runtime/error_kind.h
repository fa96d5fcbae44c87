// Why a candidate failed: the vocabulary of the worker's status, the evaluation's results, the
// results database and JSON (docs/EVALUATION.md, "Error kinds"). It lives here, in the lowest layer
// that decides one (a worker reports Crash, Timeout, OutOfBounds...), so that runtime needs nothing
// from eval; eval/result.h uses it for every result.
#pragma once
#include <optional>
#include <string_view>

namespace ekb::runtime {

// The string forms are the `error` kinds of the results JSON and database: never rename one.
enum class ErrorKind {
  None,
  Compile,          // the compiler rejected the source (or the IR solution did not lower)
  Load,             // the artifact did not load, or lacks ekb_main / has the wrong scratch symbols
  Crash,            // killed by a signal (segfault, abort, illegal instruction, ...)
  Exit,             // called exit()/_exit() inside the kernel
  Timeout,          // ran past the time limit
  Memory,           // exceeded the memory limit
  Mismatch,         // outputs differ from the reference beyond the tolerance
  UnwrittenOutput,  // some output element kept its poison value
  InputModified,    // an input buffer changed
  OutOfBounds,      // accessed memory outside its buffers (a guard region or the canary bytes around them)
  AsyncWrite,       // outputs changed after ekb_main returned (threads still writing)
  Nondeterministic, // a timed run's outputs differ from the checked run on the same inputs
  Missing,          // the solutions directory has no solution for a selected workload
  NoCode,           // the generator answered without usable code (its .meta.json says "no_code")
  GenerationFailed, // generation itself failed: endpoint unreachable, agent crashed (.meta.json "failed")
  Internal,         // the harness itself failed (reported, never blamed on the candidate silently)
  Device,           // the remote device was lost mid-evaluation (docs/DEVICES.md): never stored as a
                    // result; the candidate is evaluated again once the device is back
};

std::string_view error_kind_name(ErrorKind k);   // "compile", "crash", "unwritten_output", ...
std::optional<ErrorKind> parse_error_kind(std::string_view s);

}  // namespace ekb::runtime
