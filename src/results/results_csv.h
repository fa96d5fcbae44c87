// Every result row of a run as CSV (RFC 4180), one header line then one line per result, for
// spreadsheets and pandas.
#pragma once
#include <ostream>
#include <string>

#include "results/run_report.h"

namespace ekb::results {

// "a,b" -> "\"a,b\"": quotes a field when it holds a comma, quote or line break.
std::string csv_field(const std::string& s);
void write_results_csv(const RunReport& report, std::ostream& out);

}  // namespace ekb::results
