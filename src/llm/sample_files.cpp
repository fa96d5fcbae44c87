#include "llm/sample_files.h"

#include <fmt/core.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <stdexcept>

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

void write_file_atomically(const std::string& path, const std::string& text) {
  static std::atomic<unsigned> counter{0};
  const fs::path target(path);
  std::error_code ec;
  if (target.has_parent_path()) fs::create_directories(target.parent_path(), ec);
  const std::string tmp = fmt::format("{}.tmp-{}-{}", path, ::getpid(), counter++);
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out.write(text.data(), static_cast<std::streamsize>(text.size()));
    if (!out) throw std::runtime_error("cannot write " + tmp);
  }
  fs::rename(tmp, target, ec);
  if (ec) {
    fs::remove(tmp, ec);
    throw std::runtime_error("cannot write " + path + ": " + ec.message());
  }
}

void remove_sample_code(const std::string& dir, const std::string& workload_full_name, int sample) {
  for (const char* ext : {".c", ".cpp", ".cc", ".cu", ".cl", ".ekb"}) {
    std::error_code ec;
    fs::remove(sample_code_path(dir, workload_full_name, sample, ext), ec);
  }
}

}  // namespace ekb::llm
