// Printing a stored run's report; shared by `ekb report` and the end of `ekb eval`.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "results/result_store.h"
#include "results/run_report.h"
#include "suite/suite.h"

namespace ekb::cli {

// A share as the reports print it: "12.5%", or "-" when it is unknown.
std::string percent(std::optional<double> share);

// Tables by each grouping (default domain and level), Fast@p, and up to `failures` failures per
// error kind (-1: all). Returns the report it printed.
results::RunReport print_run_report(const suite::Suite& suite, const results::ResultStore& store,
                                    const std::string& run_id, std::vector<results::GroupBy> groupings = {},
                                    int failures = 10);

}  // namespace ekb::cli
