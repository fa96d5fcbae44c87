// A LEKA trajectory: one JSON object per line (docs/AGENT.md, "Trajectories"), appended and
// flushed as each happens, so that a killed run keeps every step it finished:
//   {"record": "analysis", ...}  the workload's analysis, first
//   {"record": "step", ...}      one per Step (policy.h), in order
//   {"record": "final", ...}     the best candidate re-evaluated with the full protocol, last
#pragma once
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "agent/policy.h"
#include "eval/result.h"

namespace ekb::agent {

nlohmann::json to_json(const WorkloadAnalysis& a);
nlohmann::json to_json(const Step& s);
Step step_from_json(const nlohmann::json& j);  // throws nlohmann::json::exception for a malformed step

// What the final, full-protocol evaluation of the best candidate found.
struct FinalRecord {
  std::string solution;  // the written solution's path
  int best_step = 0;
  bool correct = false;
  std::string error;     // the error kind's name when not correct
  std::string message;
  std::optional<double> ms, speedup, roofline_fraction;
  eval::Ledger spent;    // the workload's whole ledger, the final evaluation included
};
nlohmann::json to_json(const FinalRecord& f);
FinalRecord final_from_json(const nlohmann::json& j);

class TrajectoryWriter {
 public:
  // Creates (truncates) `path`, making its directory. Throws std::runtime_error when it cannot.
  explicit TrajectoryWriter(const std::string& path);
  void write(const WorkloadAnalysis& a) { append(to_json(a), "analysis"); }
  void write(const Step& s) { append(to_json(s), "step"); }
  void write(const FinalRecord& f) { append(to_json(f), "final"); }
  const std::string& path() const { return path_; }

 private:
  void append(nlohmann::json record, const char* kind);
  std::string path_;
  std::ofstream out_;
};

struct Trajectory {
  std::optional<nlohmann::json> analysis;
  std::vector<Step> steps;
  std::optional<FinalRecord> final;
};
// Reads a trajectory file; a truncated last line (a killed run) is ignored. Throws
// std::runtime_error naming the file and line for anything else malformed.
Trajectory read_trajectory(const std::string& path);

}  // namespace ekb::agent
