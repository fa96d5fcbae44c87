// The results database: runs, every CandidateResult of each run, and device calibrations, in one
// SQLite file (the default) or a PostgreSQL database that many writers share (--db
// postgresql://..., docs/SCALE_OUT.md), with the same schema and behaviour. Each result is committed on its own as soon as it is added, so a run killed
// at any moment (even SIGKILL) loses nothing already added, and starting it again resumes it:
// the caller asks done()/is_done() and evaluates only the rest. A UNIQUE key on
// (run, workload, solution, sample) guarantees a result is never stored twice.
#pragma once
#include <compare>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/calibration.h"
#include "eval/result.h"
#include "eval/shard.h"

namespace ekb::results {

// $EKB_DB if set, else "ekb-results.db" in the working directory.
std::string default_db_path();
// Whether a --db names a PostgreSQL database (postgresql://... or postgres://, libpq's URI form)
// rather than a SQLite file.
bool is_postgres_url(std::string_view location);

// What defines a run. Two runs with equal parameters (everything but `id`) are the same
// experiment: starting one again while the earlier is unfinished resumes the earlier.
struct RunSpec {
  std::string id;  // explicit run id (e.g. --run NAME); empty: generated, or the resumed run's
  std::string backend;
  nlohmann::json device = nlohmann::json::object();     // {"backend", "name", "compiler"}
  nlohmann::json options = nlohmann::json::object();    // evaluation options that change results
  std::string solutions_dir;
  // The workload selection: its filters, and "workloads": [full names], the denominator of
  // Correct@k and Fast@p (a selected workload without a result counts as failed).
  nlohmann::json selection = nlohmann::json::object();
  // Run in shards (--shard I/N), which may run on different machines: the device is then no
  // parameter of the run (each result records its own, and the report groups by it).
  bool sharded = false;
};

struct RunInfo {
  std::string id;
  std::string created;  // ISO 8601 UTC
  std::string backend;
  nlohmann::json device;
  nlohmann::json options;
  std::string solutions_dir;
  nlohmann::json selection;
  std::optional<std::string> finished;  // when finish_run was called
  int results = 0;                      // stored so far
  int correct = 0;

  // selection["workloads"], or empty when the run did not record its selection.
  std::vector<std::string> selected_workloads() const;
  std::string device_name() const { return device.value("name", ""); }
  // False for a run with --no-timing (options "timing": false): it has no speedups and no Fast@p.
  bool timed() const { return !(options.is_object() && options.value("timing", true) == false); }
};

struct ResultKey {
  std::string workload;
  std::string solution;
  int sample = 0;
  auto operator<=>(const ResultKey&) const = default;
};

// One shard's record: where it runs, how many results it owns, whether it finished.
struct ShardInfo {
  eval::Shard shard;
  std::string host;
  std::string device;
  int planned = 0;
  std::string started;
  std::optional<std::string> finished;
};

class StoreError : public std::runtime_error {
  using std::runtime_error::runtime_error;
};

class ResultStore {
 public:
  // Opens (creating if needed) the database at `location`: a SQLite file's path or a PostgreSQL
  // URL (is_postgres_url). Throws StoreError if it is not a results database, was written by a
  // newer schema, or the server cannot be reached.
  static ResultStore open(const std::string& location);
  ResultStore(ResultStore&&) noexcept;
  ResultStore& operator=(ResultStore&&) noexcept;
  ~ResultStore();

  // The file, or the URL with its password hidden.
  const std::string& path() const;

  // The run to store results in. With spec.id set: that run if it exists (StoreError if it was
  // created with other parameters), else a new run with that id. Without: the newest unfinished
  // run with the same parameters, else a new run with a generated id ("20240501-123456-3fa2").
  std::string begin_or_resume_run(const RunSpec& spec);
  // Marks the run complete: a later begin_or_resume_run with the same parameters starts afresh.
  void finish_run(const std::string& run);
  // Records in the run's device facts ("load") the peak 1-minute load average seen while it ran
  // and the machine's cores: a busy machine makes timings less reliable, and reports say so.
  void record_load(const std::string& run, double max_load_average, unsigned cores);
  std::optional<RunInfo> run(std::string_view id) const;
  std::vector<RunInfo> runs() const;  // newest first
  // `id`, or the newest run for "last"/"latest". Throws StoreError naming the known runs.
  std::string resolve_run(std::string_view id) const;

  bool is_done(const std::string& run, const std::string& workload, const std::string& solution, int sample) const;
  std::set<ResultKey> done(const std::string& run) const;
  // Stores `r` in its own transaction. Returns false, storing nothing, if the run already has a
  // result for (r.workload, r.solution, r.sample). Throws StoreError for an unknown run.
  bool add(const std::string& run, const eval::CandidateResult& r);
  std::vector<eval::CandidateResult> results(const std::string& run) const;  // in the order stored
  // The device name each result was measured on, where recorded (results added after
  // begin_or_resume_run record its spec's device).
  std::map<ResultKey, std::string> devices(const std::string& run) const;

  // A shard starting (again) on `host`, owning `planned` results of the run.
  void begin_shard(const std::string& run, eval::Shard shard, int planned, const std::string& host);
  // Marks the shard finished; when every shard of the run is, finishes the run. Returns whether it did.
  bool finish_shard(const std::string& run, eval::Shard shard);
  std::vector<ShardInfo> shards(const std::string& run) const;

  void add_calibration(const runtime::Calibration& c);
  // The newest calibration of this backend and device name.
  std::optional<runtime::Calibration> calibration(const std::string& backend, const std::string& device) const;

 private:
  struct Impl;
  explicit ResultStore(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace ekb::results
