// One Backend interface for every target stack (docs/ARCHITECTURE.md): cpu, cuda and opencl.
//
// A backend does the two things that differ between targets:
//   compile  a source solution into an Artifact (a file a worker can load), with a compile cache;
//   execute  kernels, but only inside a sandboxed worker process (runtime/worker.h): the backend
//            names the worker-side KernelExecutor ("cpu" loads a shared object and calls it).
// Everything else (which inputs, poisoning, checking, the timing loop) is the evaluation protocol
// in src/eval and is the same for every backend. In MultiKernelBench's terms: compile is
// Backend::compile, load / release are Worker::load / Worker::unload, and check / time are
// Worker::run calls made by eval/correctness.cpp and eval/timing.cpp.
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ir/target.h"
#include "runtime/device_selection.h"

namespace ekb::runtime {

enum class Language { C, Cpp, Cuda, OpenCL };

std::string_view language_name(Language l);  // "c", "c++", "cuda", "opencl"
std::optional<Language> parse_language(std::string_view s);
// The language a file's extension implies: .c -> C; .cc .cpp .cxx -> C++; .cu -> CUDA; .cl -> OpenCL.
std::optional<Language> language_from_path(std::string_view path);

// A source solution: the text of one translation unit obeying the kernel ABI (docs/ABI.md).
struct Source {
  Language language = Language::C;
  std::string text;
  std::string origin;  // where it came from, for messages and results: a path, or "native:default"
  // The kernel ABI's argument names (docs/ABI.md): tensors (inputs, then outputs), then params.
  // Set for a workload's solutions; an OpenCL launch description refers to its arguments by them.
  std::vector<std::string> tensor_names, param_names;

  static Source from_file(const std::string& path);  // language from the extension; throws on I/O errors
};

// What compile produced: a loadable file, owned by the compile cache (never deleted by a worker).
struct Artifact {
  std::string backend;  // "cpu"
  std::string path;     // e.g. ~/.cache/ekb/cpu/<key>.so
  std::string key;      // content hash of everything that determined it (hex)
};

struct CompileOutcome {
  bool ok = false;
  std::optional<Artifact> artifact;
  bool cached = false;      // served from the compile cache
  double seconds = 0;       // wall time of this call (hashing and cache lookup included)
  std::string message;      // on failure: the compiler's diagnostics, trimmed to the first errors
  std::string log;          // on failure: the compiler's complete output
};

// The device a result was measured on: the `device` object of the results JSON (docs/RESULTS.md).
struct DeviceInfo {
  std::string backend;   // "cpu"
  std::string name;      // "Intel(R) Xeon(R) Platinum 8480+ (16 cores)"
  std::string compiler;  // "Debian clang version 14.0.6"
  std::string target;    // a cross-compiled cpu target's triple ("": the host)
  bool emulated = false; // its kernels run under an emulator: correct or not, but never a speed
};

// How a worker for a backend starts (runtime/worker.h): the program (empty: the evaluating ekb, or
// $EKB_WORKER) and a command line it runs under (an emulator for a cross target; empty: none).
struct WorkerLaunch {
  std::string executable;
  std::vector<std::string> prefix;
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual ir::Target target() const = 0;  // also the worker's executor (make_executor)
  std::string_view name() const { return ir::target_name(target()); }  // "cpu": for results and messages
  virtual const DeviceInfo& device_info() = 0;
  // Compiles (or finds in the cache) one source solution. Never throws for a bad source: a compiler
  // rejection is a CompileOutcome with ok == false. Throws only when the toolchain is unusable.
  virtual CompileOutcome compile(const Source& source) = 0;
  // Languages this backend compiles.
  virtual bool accepts(Language l) const = 0;
  // The worker's address-space limit (RLIMIT_AS) given the one suggested for the workload; 0: none.
  virtual uint64_t worker_address_space_limit(uint64_t suggested) const { return suggested; }
  // The device the workers run kernels on: the one this backend compiles for. Empty for a backend
  // that has only one.
  virtual DeviceSelection worker_device() const { return {}; }
  virtual WorkerLaunch worker_launch() const { return {}; }
};

// What `ekb eval --platform --device --build-options` choose: the opencl backend's device and
// clBuildProgram options. Unset: $EKB_OPENCL_PLATFORM / $EKB_OPENCL_DEVICE (docs/ABI.md), else the
// first platform with a device; opencl::default_build_options().
struct BackendOptions {
  std::optional<std::string> cpu_target;  // cpu: a triple of runtime/cpu_target.h (unset: the host)
  std::optional<std::string> platform;
  std::optional<int> device;
  std::optional<std::string> build_options;
};

// The backend of a target, the opencl one configured by `options`. Throws std::runtime_error saying
// why for a backend that cannot run here (cuda without a GPU, opencl without a platform).
std::unique_ptr<Backend> make_backend(ir::Target target, const BackendOptions& options = {});

}  // namespace ekb::runtime
