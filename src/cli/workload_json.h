// One workload's facts as JSON: names, classification, shapes and cost. Used by list and show.
#pragma once
#include <nlohmann/json.hpp>

#include "suite/suite.h"

namespace ekb::cli {

// If the workload does not verify, "valid" is false, "error" holds the diagnostics and the
// shape/cost fields are null.
nlohmann::json workload_json(const suite::WorkloadEntry& w);

}  // namespace ekb::cli
