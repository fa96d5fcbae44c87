// A solution's metadata file, `WORKLOAD.sN.meta.json` beside `WORKLOAD.sN.EXT` (docs/SOLUTIONS.md):
// how the candidate was produced (direct generation by `ekb generate`, an external coding agent
// through `ekb workspace collect`) and what it cost. `ekb eval` reads it into each result's
// Provenance; a metadata file without a code file is a failed sample (no_code, generation_failed).
#pragma once
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "eval/result.h"

namespace ekb::eval {

struct SolutionMeta {
  std::string method;         // "direct" | "agent:NAME"
  std::string profile;        // model profile (direct) or agent name; empty when unknown
  std::string model;
  std::string endpoint_kind;  // "openai" | "anthropic"; empty for agents (their CLI decides)
  std::string prompt_hash;
  int sample = 0;
  std::optional<double> temperature;
  std::string status = "ok";  // "ok" | "no_code" | "failed"
  std::string error;          // only when status is not ok
  Ledger ledger;
  double latency_s = 0;
  bool cached = false;
  // Agents only.
  std::optional<int64_t> check_calls;
  std::string transcript;     // the transcript's file name, beside the meta file
  std::string backend;        // when set, the backend the solution was made for

  bool ok() const { return status == "ok"; }
  // The failure kind of a sample that has this metadata but no code: NoCode for "no_code",
  // GenerationFailed for "failed", Missing when the metadata claims code that is not there.
  ErrorKind failure_kind() const;
  Provenance provenance() const { return {method, model, ledger}; }
};

// Reads the contract's keys (docs/SOLUTIONS.md); unknown keys are ignored, absent ones keep their
// defaults. Throws std::invalid_argument naming `origin` for malformed JSON or wrongly typed keys.
SolutionMeta parse_solution_meta(const std::string& text, const std::string& origin);
SolutionMeta read_solution_meta(const std::string& path);
// Every contract key; empty strings and unknown values as null.
nlohmann::json to_json(const SolutionMeta& m);

// The contract's "ledger" object (every field), and back: absent fields are 0; throws
// std::invalid_argument naming `where` for a wrongly typed one or a value that is not an object.
nlohmann::json to_json(const Ledger& l);
Ledger parse_ledger(const nlohmann::json& j, const std::string& where);

// The metadata file's name for WORKLOAD's sample N: "WORKLOAD.sN.meta.json".
std::string meta_file_name(const std::string& workload_name, int sample);

}  // namespace ekb::eval
