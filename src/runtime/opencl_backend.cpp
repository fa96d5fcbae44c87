#include "runtime/opencl_backend.h"

#include <chrono>

#include "runtime/compile_step.h"
#include "runtime/opencl_program.h"
#include "runtime/paths.h"

namespace ekb::runtime {

namespace {

std::string join(const std::vector<std::string>& v) {
  std::string s;
  for (const std::string& x : v) s += (s.empty() ? "" : ",") + x;
  return s;
}

}  // namespace

OpenCLBackend::OpenCLBackend(OpenCLBackendOptions options)
    : options_(std::move(options)),
      cache_(options_.cache_dir.empty() ? default_cache_dir() : options_.cache_dir, "opencl") {
  if (options_.build_options.empty()) options_.build_options = opencl::default_build_options();
  try {
    device_ = opencl::select_device(options_.device);
  } catch (const std::exception& e) {
    throw std::runtime_error(std::string("the opencl backend cannot run here: ") + e.what());
  }
  // The name keys stored calibrations: no memory size in it, which PoCL derives from the host's
  // free memory (it changed between two runs here).
  info_ = {"opencl",
           device_.name + " (" + device_.platform_name + ", " + std::to_string(device_.compute_units) +
               " compute units, driver " + device_.driver_version + ")",
           device_.version + " (" + device_.platform_version + "), build options " + options_.build_options};
}

CompileOutcome OpenCLBackend::compile(const Source& source) {
  const auto t0 = std::chrono::steady_clock::now();
  if (!accepts(source.language)) {
    CompileOutcome out;
    out.message = "the opencl backend compiles OpenCL C (.cl), not " + std::string(language_name(source.language));
    out.log = out.message;
    return out;
  }
  const std::string tensors = join(source.tensor_names), params = join(source.param_names);
  const std::string key = content_key({"opencl-program/1", source.text, tensors, params, options_.build_options,
                                       device_.identity()});
  CompilerInvocation invocation;
  invocation.head = {default_worker_executable(), "opencl-compile", "--platform", device_.platform_name,
                     "--device", std::to_string(device_.index), "--tensors", tensors, "--params", params,
                     "--options", options_.build_options};
  invocation.source_ext = ".cl";
  invocation.artifact_ext = ".clprog";
  invocation.command.timeout_s = options_.compile_timeout_s;
  // An address-space limit only where the device is the CPU: a GPU driver reserves address space
  // for all of device and host memory when the platform loads, so under a limit the ICD loader
  // silently drops the platform (the NVIDIA one did, on the H200) and the child finds no device.
  invocation.command.memory_limit_bytes = device_.is_cpu() ? options_.compiler_memory_limit : 0;
  return compile_into_cache(cache_, "opencl", key, source, invocation, t0);
}

}  // namespace ekb::runtime
