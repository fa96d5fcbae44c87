// Test parameter lists that take a suite load to compute, cached beside the test binary. ctest runs
// every test in a process of its own, and each process computes every parameter list at static
// initialization: with 3400 tests, ~0.15 s each of loading and binding the suite was ~5 minutes of
// a CI run. The cache is valid for the binary that wrote it only (its size and modification time:
// the suite is embedded in it), under the same $EKB_SUITE and the same `inputs` (whatever else
// the list depends on, such as a directory's files); anything else recomputes it.
#pragma once
#include <sys/stat.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <unistd.h>
#include <vector>

namespace ekb::testing {

// The files under `dir`, each with its size and modification time, one per line, sorted.
inline std::string directory_state(const std::string& dir) {
  namespace fs = std::filesystem;
  std::vector<std::string> lines;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    struct stat st {};
    if (it->is_regular_file(ec) && ::stat(it->path().c_str(), &st) == 0)
      lines.push_back(it->path().string() + " " + std::to_string(st.st_size) + " " + std::to_string(st.st_mtim.tv_sec) + "." +
                      std::to_string(st.st_mtim.tv_nsec));
  }
  std::sort(lines.begin(), lines.end());
  std::string out;
  for (const auto& l : lines) out += l + ";";
  return out;
}

inline std::vector<std::string> cached_param_list(const std::string& name, const std::string& inputs,
                                                  const std::function<std::vector<std::string>()>& compute) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  struct stat st {};
  if (ec || ::stat(exe.c_str(), &st) != 0) return compute();
  const char* suite = std::getenv("EKB_SUITE");
  std::string key = std::to_string(st.st_size) + " " + std::to_string(st.st_mtim.tv_sec) + "." +
                    std::to_string(st.st_mtim.tv_nsec) + " suite=" + (suite ? suite : "") + " " + inputs;
  for (char& c : key)
    if (c == '\n') c = ' ';
  const fs::path file = fs::path(exe.string() + ".params") / name;
  {
    std::ifstream in(file);
    std::string first;
    if (in && std::getline(in, first) && first == key) {
      std::vector<std::string> out;
      for (std::string line; std::getline(in, line);) out.push_back(line);
      return out;
    }
  }
  std::vector<std::string> out = compute();
  fs::create_directories(file.parent_path(), ec);
  // Written whole under a private name, then renamed: a concurrent reader sees the old or the new.
  const fs::path tmp = file.string() + ".tmp" + std::to_string(::getpid());
  {
    std::ofstream f(tmp);
    f << key << "\n";
    for (const auto& s : out) f << s << "\n";
  }
  fs::rename(tmp, file, ec);
  if (ec) fs::remove(tmp, ec);
  return out;
}

}  // namespace ekb::testing
