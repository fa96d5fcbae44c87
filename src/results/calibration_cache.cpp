#include "results/calibration_cache.h"

#include <cctype>
#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "results/result_store.h"
#include "runtime/paths.h"

namespace ekb::results {

namespace fs = std::filesystem;

std::string calibration_file_path(const std::string& backend, const std::string& device) {
  std::string name = backend + "-";
  for (char c : device) name += std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' ? c : '_';
  return (fs::path(runtime::default_cache_dir()) / "calibration" / (name + ".json")).string();
}

std::string save_calibration_file(const runtime::Calibration& c) {
  fs::path path = calibration_file_path(c.backend, c.device);
  fs::create_directories(path.parent_path());
  // Written beside the target and renamed over it, so a reader never sees half a file.
  fs::path tmp = path;
  tmp += ".tmp";
  {
    std::ofstream out(tmp);
    out << runtime::to_json(c).dump(2) << "\n";
    if (!out) throw std::runtime_error("cannot write " + tmp.string());
  }
  fs::rename(tmp, path);
  return path.string();
}

std::optional<runtime::Calibration> load_calibration_file(const std::string& backend, const std::string& device) {
  std::ifstream in(calibration_file_path(backend, device));
  if (!in) return std::nullopt;
  try {
    return runtime::calibration_from_json(nlohmann::json::parse(in));
  } catch (const nlohmann::json::exception&) {
    return std::nullopt;
  }
}

std::optional<runtime::Calibration> find_calibration(const ResultStore* store, const std::string& backend,
                                                  const std::string& device) {
  // One measured by an older method does not count (runtime::is_current).
  if (store)
    if (auto c = store->calibration(backend, device); c && runtime::is_current(*c)) return c;
  auto c = load_calibration_file(backend, device);
  if (c && !runtime::is_current(*c)) return std::nullopt;
  return c;
}

}  // namespace ekb::results
