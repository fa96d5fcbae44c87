#include "runtime/backend.h"

#include <array>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <utility>

#include "runtime/cpu_backend.h"
#include "runtime/cuda_backend.h"
#include "runtime/opencl_backend.h"
#include "runtime/opencl_program.h"

namespace ekb::runtime {

namespace {
constexpr std::array<std::pair<Language, std::string_view>, 4> kLanguageNames{{
    {Language::C, "c"}, {Language::Cpp, "c++"}, {Language::Cuda, "cuda"}, {Language::OpenCL, "opencl"}}};
}

std::string_view language_name(Language l) {
  for (const auto& [lang, name] : kLanguageNames)
    if (lang == l) return name;
  return "c";
}

std::optional<Language> parse_language(std::string_view s) {
  for (const auto& [lang, name] : kLanguageNames)
    if (name == s) return lang;
  if (s == "cpp" || s == "cxx") return Language::Cpp;
  return std::nullopt;
}

std::optional<Language> language_from_path(std::string_view path) {
  auto ends = [&](std::string_view e) {
    return path.size() >= e.size() && path.substr(path.size() - e.size()) == e;
  };
  if (ends(".c")) return Language::C;
  if (ends(".cc") || ends(".cpp") || ends(".cxx") || ends(".C")) return Language::Cpp;
  if (ends(".cu")) return Language::Cuda;
  if (ends(".cl")) return Language::OpenCL;
  return std::nullopt;
}

Source Source::from_file(const std::string& path) {
  auto lang = language_from_path(path);
  if (!lang) throw std::runtime_error("cannot tell the language of " + path +
                                      " from its extension (.c, .cpp, .cu, .cl)");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path);
  std::ostringstream ss;
  ss << in.rdbuf();
  return Source{*lang, ss.str(), path};
}

std::unique_ptr<Backend> make_backend(ir::Target target, const BackendOptions& options) {
  switch (target) {
    case ir::Target::Cpu: {
      CpuBackendOptions cpu;
      if (options.cpu_target) {
        try {
          cpu.target = cpu_target(*options.cpu_target);
        } catch (const std::invalid_argument& e) {
          throw std::runtime_error(e.what());
        }
      }
      return std::make_unique<CpuBackend>(cpu);
    }
    case ir::Target::Cuda: return std::make_unique<CudaBackend>();  // throws when there is no CUDA device
    case ir::Target::OpenCL: {  // throws when there is no OpenCL platform
      OpenCLBackendOptions chosen;
      chosen.device = opencl::device_from_environment();
      if (options.platform) chosen.device.platform = *options.platform;
      if (options.device) chosen.device.device = *options.device;
      chosen.build_options = options.build_options.value_or(opencl::default_build_options());
      return std::make_unique<OpenCLBackend>(chosen);
    }
  }
  throw std::logic_error("make_backend: no backend for this target");
}

}  // namespace ekb::runtime
