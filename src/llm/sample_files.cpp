#include "llm/sample_files.h"

#include <fmt/core.h>

#include <filesystem>

#include "eval/solution_meta.h"

namespace ekb::llm {

namespace fs = std::filesystem;

std::string sample_meta_path(const std::string& dir, const std::string& workload_full_name, int sample) {
  const fs::path name(workload_full_name);  // pattern/workload
  return (fs::path(dir) / name.parent_path() / eval::meta_file_name(name.filename().string(), sample)).string();
}

std::string sample_code_path(const std::string& dir, const std::string& workload_full_name, int sample,
                             const std::string& extension) {
  return fmt::format("{}/{}.s{}{}", dir, workload_full_name, sample, extension);
}

void remove_sample_code(const std::string& dir, const std::string& workload_full_name, int sample) {
  for (const char* ext : {".c", ".cpp", ".cc", ".cu", ".cl", ".ekb"}) {
    std::error_code ec;
    fs::remove(sample_code_path(dir, workload_full_name, sample, ext), ec);
  }
}

}  // namespace ekb::llm
