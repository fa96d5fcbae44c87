#include "runtime/paths.h"

#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <system_error>
#include <vector>

namespace ekb::runtime {

namespace fs = std::filesystem;

namespace {
std::string env_or_empty(const char* name) {
  const char* v = std::getenv(name);
  return v && *v ? std::string(v) : std::string();
}

bool is_file(const fs::path& p) {
  std::error_code ec;
  return fs::is_regular_file(p, ec);
}
}  // namespace

std::string executable_dir() {
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (ec) return fs::current_path().string();
  return exe.parent_path().string();
}

std::string abi_header_path() {
  if (std::string env = env_or_empty("EKB_ABI_HEADER"); !env.empty()) {
    if (!is_file(env)) throw std::runtime_error("$EKB_ABI_HEADER names no file: " + env);
    return env;
  }
  fs::path exe_dir = executable_dir();
  std::vector<fs::path> candidates = {
      exe_dir / ".." / "include" / "ekb" / "ekb_abi.h",
      exe_dir / ".." / ".." / "include" / "ekb" / "ekb_abi.h",
  };
#ifdef EKB_SOURCE_DIR
  candidates.push_back(fs::path(EKB_SOURCE_DIR) / "include" / "ekb" / "ekb_abi.h");
#endif
  for (const fs::path& c : candidates)
    if (is_file(c)) return fs::weakly_canonical(c).string();
  throw std::runtime_error(
      "cannot find include/ekb/ekb_abi.h next to the ekb executable or in the source tree; "
      "set $EKB_ABI_HEADER");
}

std::string default_cache_dir() {
  // Absolute, so that the paths under it mean the same to processes started elsewhere (the TVM
  // bridge runs in its own directory) when the variable is relative.
  if (std::string env = env_or_empty("EKB_CACHE_DIR"); !env.empty()) return fs::absolute(env).string();
  if (std::string xdg = env_or_empty("XDG_CACHE_HOME"); !xdg.empty()) return fs::absolute(xdg + "/ekb").string();
  if (std::string home = env_or_empty("HOME"); !home.empty()) return home + "/.cache/ekb";
  return (fs::temp_directory_path() / "ekb-cache").string();
}

std::string default_worker_executable() {
  if (std::string env = env_or_empty("EKB_WORKER"); !env.empty()) return env;
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  // `ekb` and `ekb-device` (src/device) both have the `worker` subcommand.
  if (!ec && (exe.filename() == "ekb" || exe.filename() == "ekb-device")) return exe.string();
  fs::path dir = executable_dir();
  for (const fs::path& c : {dir / "ekb", dir / ".." / "ekb"})
    if (is_file(c) && ::access(c.c_str(), X_OK) == 0) return fs::weakly_canonical(c).string();
  throw std::runtime_error(
      "cannot find the `ekb` or `ekb-device` executable to start workers from; set $EKB_WORKER");
}

void make_directories(const std::string& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw std::runtime_error("cannot create directory " + dir + ": " + ec.message());
}

void write_file_atomically(const std::string& path, const std::string& text) {
  static std::atomic<unsigned> counter{0};
  const fs::path target(path);
  std::error_code ec;
  if (target.has_parent_path()) fs::create_directories(target.parent_path(), ec);
  const std::string tmp = path + ".tmp-" + std::to_string(::getpid()) + "-" + std::to_string(counter++);
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

}  // namespace ekb::runtime
