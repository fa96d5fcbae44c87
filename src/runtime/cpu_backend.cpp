#include "runtime/cpu_backend.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "runtime/compile_step.h"
#include "runtime/cpu_features.h"
#include "runtime/paths.h"
#include "runtime/subprocess.h"

namespace ekb::runtime {

namespace {

std::string env_or(const char* name, const char* fallback) {
  const char* v = std::getenv(name);
  return v && *v ? v : fallback;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

std::string cpu_model_name() {
  std::string info = read_cpuinfo();
  std::string model = cpuinfo_field(info, "model name");
  if (model.empty()) model = cpuinfo_field(info, "Model");  // some aarch64 kernels
  if (model.empty()) model = "unknown cpu";
  unsigned n = std::thread::hardware_concurrency();
  return model + " (" + std::to_string(n) + (n == 1 ? " core)" : " cores)");
}

CpuBackend::CpuBackend(CpuBackendOptions options)
    : options_(std::move(options)),
      cache_(options_.cache_dir.empty() ? default_cache_dir() : options_.cache_dir,
             options_.target.is_host() ? "cpu" : "cpu-" + options_.target.triple) {
  if (options_.cc.empty()) options_.cc = env_or("EKB_CC", "clang");
  if (options_.cxx.empty()) options_.cxx = env_or("EKB_CXX", "clang++");
  abi_header_ = abi_header_path();
  abi_header_text_ = read_file(abi_header_);
  std::string info = read_cpuinfo();
  cpu_identity_ = options_.target.is_host()
                      ? cpuinfo_field(info, "model name") + "|" + cpuinfo_field(info, "flags") + "|" +
                            cpuinfo_field(info, "Features") + "|" + cpuinfo_field(info, "CPU part")
                      : "target " + options_.target.triple;
}

const std::string& CpuBackend::compiler_version(const std::string& compiler) {
  std::lock_guard lock(mutex_);
  for (const auto& [c, v] : versions_)
    if (c == compiler) return v;
  CommandOptions version_options;
  version_options.timeout_s = 30;
  CommandResult r = run_command({compiler, "--version"}, version_options);
  if (!r.ok())
    throw std::runtime_error("cannot run the C/C++ compiler '" + compiler +
                             "' (set $EKB_CC / $EKB_CXX): " + trim_compiler_log(r.output, 3));
  std::string first = r.output.substr(0, r.output.find('\n'));
  versions_.emplace_back(compiler, first);
  return versions_.back().second;
}

const DeviceInfo& CpuBackend::device_info() {
  const std::string& version = compiler_version(options_.cc);
  std::lock_guard lock(mutex_);
  if (device_.backend.empty())
    device_ = {"cpu", options_.target.is_host() ? cpu_model_name() : options_.target.device_name, version,
               options_.target.triple, options_.target.emulated};
  return device_;
}

std::vector<std::string> CpuBackend::flags(Language l) const {
  std::vector<std::string> f = {"-x", l == Language::C ? "c" : "c++", l == Language::C ? "-std=gnu17" : "-std=gnu++20",
                                "-O3"};
  f.insert(f.end(), options_.target.compile_flags.begin(), options_.target.compile_flags.end());
  f.insert(f.end(), {"-include", abi_header_});
  return f;
}

std::vector<std::string> CpuBackend::object_command(Language l, const std::string& source_path,
                                                    const std::string& object_path) const {
  std::vector<std::string> cmd = {l == Language::C ? options_.cc : options_.cxx};
  for (const std::string& f : flags(l))
    if (f != "-shared") cmd.push_back(f);
  cmd.insert(cmd.end(), {"-c", source_path, "-o", object_path});
  return cmd;
}

std::vector<std::string> CpuBackend::program_flags() const {
  std::vector<std::string> out = {"-O2"};
  for (const std::string& f : options_.target.compile_flags)
    if (f != "-shared" && f != "-fPIC") out.push_back(f);
  return out;
}

std::vector<std::string> CpuBackend::program_command(const std::vector<std::string>& inputs,
                                                     const std::string& program_path) const {
  std::vector<std::string> cmd = {options_.cc};
  for (const std::string& f : program_flags()) cmd.push_back(f);
  cmd.insert(cmd.end(), inputs.begin(), inputs.end());
  cmd.insert(cmd.end(), options_.target.libraries.begin(), options_.target.libraries.end());
  cmd.insert(cmd.end(), {"-o", program_path});
  return cmd;
}

CompileOutcome CpuBackend::compile(const Source& source) {
  auto t0 = std::chrono::steady_clock::now();
  auto elapsed = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  };
  CompileOutcome out;
  if (!accepts(source.language)) {
    out.message = "the cpu backend compiles C and C++, not " +
                  std::string(language_name(source.language));
    out.log = out.message;
    out.seconds = elapsed();
    return out;
  }
  const std::string& compiler = source.language == Language::C ? options_.cc : options_.cxx;
  std::vector<std::string> fl = flags(source.language);
  const std::vector<std::string>& libs = options_.target.libraries;
  std::string flag_text;
  for (const auto& f : fl) flag_text += f + " ";
  for (const auto& f : libs) flag_text += f + " ";
  std::string key = content_key({"cpu", language_name(source.language), source.text, compiler,
                                 compiler_version(compiler), flag_text, abi_header_text_,
                                 cpu_identity_});
  CompilerInvocation invocation;
  invocation.head = {compiler};
  invocation.head.insert(invocation.head.end(), fl.begin(), fl.end());
  invocation.tail = libs;
  invocation.source_ext = source.language == Language::C ? ".c" : ".cpp";
  invocation.artifact_ext = ".so";
  invocation.command.timeout_s = options_.compile_timeout_s;
  invocation.command.memory_limit_bytes = options_.compiler_memory_limit;
  return compile_into_cache(cache_, "cpu", key, source, invocation, t0);
}

}  // namespace ekb::runtime
