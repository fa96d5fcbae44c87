#include "runtime/cuda_backend.h"

#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <sstream>
#include <stdexcept>

#include "runtime/compile_step.h"
#include "runtime/paths.h"
#include "runtime/subprocess.h"

namespace ekb::runtime {

namespace {

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

bool is_executable(const std::string& path) { return ::access(path.c_str(), X_OK) == 0; }

}  // namespace

std::string find_nvcc() {
  if (std::string e = env("EKB_NVCC"); !e.empty()) return e;
  std::istringstream path(env("PATH"));
  for (std::string dir; std::getline(path, dir, ':');)
    if (!dir.empty() && is_executable(dir + "/nvcc")) return dir + "/nvcc";
  for (const std::string& home : {env("CUDA_HOME"), env("CUDA_PATH"), std::string("/usr/local/cuda")})
    if (!home.empty() && is_executable(home + "/bin/nvcc")) return home + "/bin/nvcc";
  return "";
}

std::string cuda_device_name(const cuda::DeviceProperties& p) {
  return p.name + " (" + p.arch() + ", " + std::to_string(p.multiprocessors) + " SMs, " +
         std::to_string(p.memory_bytes >> 30) + " GiB, driver " + std::to_string(p.driver_version / 1000) + "." +
         std::to_string(p.driver_version % 1000 / 10) + ")";
}

CudaBackend::CudaBackend(CudaBackendOptions options)
    : options_(std::move(options)),
      cache_(options_.cache_dir.empty() ? default_cache_dir() : options_.cache_dir, "cuda") {
  if (options_.nvcc.empty()) options_.nvcc = find_nvcc();
  if (options_.arch.empty()) options_.arch = env("EKB_CUDA_ARCH");
  if (options_.arch.empty()) {
    // The device decides the arch; without one the backend cannot run anything anyway.
    try {
      device_properties_ = cuda::query_device();
    } catch (const std::exception& e) {
      throw std::runtime_error(std::string("the cuda backend cannot run here: ") + e.what());
    }
    options_.arch = device_properties_->arch();
  }
}

const std::string& CudaBackend::nvcc_version() {
  std::lock_guard lock(mutex_);
  if (!nvcc_version_.empty()) return nvcc_version_;
  if (options_.nvcc.empty())
    throw std::runtime_error("nvcc is not installed (not on the PATH, not in $CUDA_HOME/bin; set $EKB_NVCC)");
  CommandOptions version_options;
  version_options.timeout_s = 30;
  CommandResult r = run_command({options_.nvcc, "--version"}, version_options);
  if (!r.ok()) throw std::runtime_error("cannot run nvcc '" + options_.nvcc + "': " + trim_compiler_log(r.output, 3));
  std::istringstream lines(r.output);
  for (std::string line; std::getline(lines, line);)
    if (line.find("release") != std::string::npos) nvcc_version_ = line;
  if (nvcc_version_.empty()) nvcc_version_ = r.output.substr(0, r.output.find('\n'));
  return nvcc_version_;
}

const DeviceInfo& CudaBackend::device_info() {
  const std::string& version = nvcc_version();
  std::lock_guard lock(mutex_);
  if (!device_.backend.empty()) return device_;
  if (!device_properties_) device_properties_ = cuda::query_device();  // throws: no device
  device_ = {"cuda", cuda_device_name(*device_properties_), "nvcc: " + version};
  return device_;
}

std::vector<std::string> CudaBackend::flags() const {
  // The half-precision types of the ABI (docs/ABI.md) are there without an #include.
  return {"-O3", "-arch=" + options_.arch, "-std=c++17", "-Xcompiler", "-fPIC", "-shared",
          "-include", "cuda_fp16.h", "-include", "cuda_bf16.h"};
}

CompileOutcome CudaBackend::compile(const Source& source) {
  const auto t0 = std::chrono::steady_clock::now();
  if (!accepts(source.language)) {
    CompileOutcome out;
    out.message = "the cuda backend compiles CUDA (.cu), not " + std::string(language_name(source.language));
    out.log = out.message;
    return out;
  }
  std::vector<std::string> fl = flags();
  std::string flag_text;
  for (const auto& f : fl) flag_text += f + " ";
  std::string key = content_key({"cuda", source.text, options_.nvcc, nvcc_version(), flag_text});
  CompilerInvocation invocation;
  invocation.head = {options_.nvcc};
  invocation.head.insert(invocation.head.end(), fl.begin(), fl.end());
  invocation.source_ext = ".cu";
  invocation.artifact_ext = ".so";
  invocation.command.timeout_s = options_.compile_timeout_s;
  invocation.command.memory_limit_bytes = options_.compiler_memory_limit;
  return compile_into_cache(cache_, "cuda", key, source, invocation, t0);
}

}  // namespace ekb::runtime
