// Calibrations as JSON files under the ekb cache directory, so that a device measured once serves
// every results database on the machine. `ekb calibrate` writes both the file and the database.
#pragma once
#include <optional>
#include <string>

#include "runtime/calibration.h"

namespace ekb::results {

class ResultStore;

// runtime::default_cache_dir()/calibration/BACKEND-DEVICE.json ($EKB_CACHE_DIR, else
// ~/.cache/ekb), the device name reduced to [A-Za-z0-9._-].
std::string calibration_file_path(const std::string& backend, const std::string& device);

// Writes the file (creating directories); returns its path. Throws std::runtime_error on failure.
std::string save_calibration_file(const runtime::Calibration& c);
// nullopt when there is no file or it does not parse.
std::optional<runtime::Calibration> load_calibration_file(const std::string& backend, const std::string& device);

// The calibration to judge a run on this backend and device against: the newest in `store` (if
// given), else the cached file.
std::optional<runtime::Calibration> find_calibration(const ResultStore* store, const std::string& backend,
                                                  const std::string& device);

}  // namespace ekb::results
