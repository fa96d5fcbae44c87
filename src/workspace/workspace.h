// Task folders for external coding agents (docs/AGENTS.md): `ekb workspace create` writes one,
// `ekb workspace check` (run through the folder's `check` script) evaluates its solution with the
// real harness and logs the call, `ekb workspace collect` records the final solution in the
// solutions layout (docs/SOLUTIONS.md) with its metadata and budget ledger.
//
// A workspace holds only what a person would be given: the task statement, the ABI header, a
// skeleton with the right signature, a README and the `check` script. No reference outputs (they
// are computed per check call, on inputs from a fresh random seed) and no baseline source.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "eval/result.h"
#include "eval/solution_meta.h"
#include "ir/target.h"
#include "suite/suite.h"

namespace ekb::workspace {

// DIR/.ekb/workspace.json: what the workspace is for.
struct WorkspaceInfo {
  std::string id;             // random; names the check log kept outside the folder
  std::string workload;       // PATTERN/WORKLOAD
  std::string backend;        // cpu, cuda, opencl
  std::string solution_file;  // "solution.c", ".cpp", ".cu", ".cl"
  std::string skeleton_hash;  // of the starting file: collect tells an untouched skeleton (no code)
  std::string prompt_hash;    // of TASK.md
  std::string created;        // ISO 8601 UTC
  double created_unix_s = 0;  // the start of the agent's wall time
  std::string suite_dir;      // the suite the workload was taken from (empty: ekb's built-in copy)
};

struct CreateOptions {
  std::string dir;
  ir::Target backend = ir::Target::Cpu;
  std::string language = "c";  // cpu only: "c" or "cpp"
  std::string ekb_path;        // absolute path of the ekb the check script calls
  std::string suite_dir;       // passed on to the check script when not empty
};

// Writes the workspace for `w` into opt.dir (created; it must not exist or be empty). Throws
// std::runtime_error (std::invalid_argument for bad options).
WorkspaceInfo create_workspace(const suite::WorkloadEntry& w, const CreateOptions& opt);

// Reads DIR/.ekb/workspace.json; throws std::invalid_argument when DIR is not a workspace.
WorkspaceInfo read_workspace(const std::string& dir);

// One `check` call, as logged (JSON lines).
struct CheckRecord {
  int64_t number = 0;       // 1, 2, ...: the call's position in the log
  std::string started;      // ISO 8601 UTC
  double wall_s = 0;        // the whole call: compile, trials, timing
  bool compiled = false;
  bool correct = false;
  std::string error;        // error kind, empty when correct
  std::optional<double> speedup;
  std::string solution_hash;
};

// The check ledger (docs/AGENTS.md, "Counting") lives outside the folder, in
// <cache dir>/workspaces/: ID.json, written at create, binds the workspace's id to its directory
// and workload and holds a random key; ID.jsonl has one line per check, each carrying the HMAC
// (SHA-256, that key) of its content and of the previous line's HMAC. DIR/.ekb/checks.jsonl is a
// copy for people, never counted.
//
// Appends `r` to both logs (append-only, one write each, under a lock). Returns r with its number.
CheckRecord log_check(const WorkspaceInfo& info, const std::string& dir, CheckRecord r);

struct CheckLedger {
  std::vector<CheckRecord> checks;  // the lines that verified, in order
  // Why the ledger cannot be trusted, empty when it verifies: its files are missing, it belongs to
  // another directory or workload, a line was edited, removed, reordered or inserted.
  std::string tampered;
};
// Reads and verifies the ledger of the workspace in `dir`.
CheckLedger read_ledger(const WorkspaceInfo& info, const std::string& dir);
std::string outside_log_path(const WorkspaceInfo& info);

// Compiles, checks and (unless !timing) times the workspace's solution with eval::evaluate, on
// inputs drawn from `seed`. Never throws for anything the solution does.
eval::CandidateResult check_solution(const suite::WorkloadEntry& w, const WorkspaceInfo& info,
                                     const std::string& dir, bool timing, uint64_t seed);

// What a developer wants to read after a check: compile errors, where outputs differ, time against
// the baseline with its spread.
std::string check_feedback(const eval::CandidateResult& r, const WorkspaceInfo& info, int64_t call_number);

struct CollectOptions {
  std::string out;         // solutions directory
  std::optional<int> sample;  // default: the next free sample index of the workload in `out`
  std::string transcript;  // the agent's transcript file, copied beside the solution
  std::string agent;       // method "agent:NAME"; default: the transcript's agent, else "unknown"
  std::string model;       // default: the transcript's model
  double wall_s = 0;       // the agent's wall time; 0: from the workspace's creation until now
};

struct Collected {
  std::string solution_path;   // empty when the agent left no code
  std::string meta_path;
  std::string transcript_path; // empty without a transcript
  eval::SolutionMeta meta;
};

// Records the workspace's final solution as OUT/PATTERN/WORKLOAD.sN.EXT with WORKLOAD.sN.meta.json
// (status no_code, and no code file, when the solution is missing or still the skeleton) and the
// transcript as WORKLOAD.sN.transcript.EXT. A ledger that does not verify makes the sample failed
// (status "failed", the reason in its error, no code file): its budget is unknown. Throws
// std::invalid_argument, std::runtime_error.
Collected collect_workspace(const std::string& dir, const CollectOptions& opt);

}  // namespace ekb::workspace
