// Where `ekb generate` puts a sample (docs/SOLUTIONS.md): the solution PATTERN/WORKLOAD.sN.EXT when
// the model gave code, and always its record PATTERN/WORKLOAD.sN.meta.json (eval::SolutionMeta,
// the contract `ekb eval` reads). Files are replaced atomically (runtime::write_file_atomically), so a killed run leaves each file
// whole or absent, and the record is written last: it marks the sample done.
#pragma once
#include <string>

namespace ekb::llm {

// `workload_full_name` is "pattern/workload".
std::string sample_meta_path(const std::string& dir, const std::string& workload_full_name, int sample);
std::string sample_code_path(const std::string& dir, const std::string& workload_full_name, int sample,
                             const std::string& extension);

// Removes the solution files of one sample (every extension a solution can have), so that a
// sample generated again never leaves two solutions with the same index.
void remove_sample_code(const std::string& dir, const std::string& workload_full_name, int sample);

}  // namespace ekb::llm
