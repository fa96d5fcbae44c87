#include "results/result_store.h"

#include <SQLiteCpp/SQLiteCpp.h>
#include <sqlite3.h>
#include <fmt/core.h>

#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <random>
#include <thread>

namespace ekb::results {

namespace {

// 1: runs, results, calibrations. 2: the budget ledger of each result (columns method .. wall_s).
// 3: max_error_ratio, how close each result came to its tolerance; the speedup's 95% interval and
// the CPU steal time while timing. 4: the baseline each result was measured against.
constexpr int kSchemaVersion = 5;

// synchronous=FULL makes each commit durable even across power loss; one fsync per evaluated
// candidate is negligible next to compiling and timing it.
constexpr const char* kPragmas = R"sql(
PRAGMA synchronous = FULL;
PRAGMA foreign_keys = ON;
)sql";
constexpr int kBusyTimeoutMs = 30000;

constexpr const char* kSchema = R"sql(
CREATE TABLE IF NOT EXISTS runs (
  id            TEXT PRIMARY KEY,
  created       TEXT NOT NULL,
  backend       TEXT NOT NULL,
  device        TEXT NOT NULL,  -- JSON {"backend", "name", "compiler"}
  options       TEXT NOT NULL,  -- JSON
  solutions_dir TEXT NOT NULL,
  selection     TEXT NOT NULL,  -- JSON: filters and "workloads"
  params        TEXT NOT NULL,  -- canonical JSON of all the above but id/created: "same parameters"
  finished      TEXT            -- set by finish_run
);
CREATE INDEX IF NOT EXISTS runs_by_params ON runs(params);

CREATE TABLE IF NOT EXISTS results (
  seq                INTEGER PRIMARY KEY AUTOINCREMENT,  -- completion order
  run_id             TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  workload           TEXT NOT NULL,
  solution           TEXT NOT NULL,
  sample             INTEGER NOT NULL,
  task               TEXT NOT NULL,
  backend            TEXT NOT NULL,
  compiled           INTEGER NOT NULL,
  correct            INTEGER NOT NULL,
  error              TEXT,           -- error kind ("compile", ...), NULL when none
  message            TEXT NOT NULL,
  time_median_ms     REAL,           -- NULL when not timed
  time_p25_ms        REAL,
  time_p75_ms        REAL,
  time_runs          INTEGER,
  baseline_median_ms REAL,
  baseline_p25_ms    REAL,
  baseline_p75_ms    REAL,
  baseline_runs      INTEGER,
  speedup            REAL,
  max_abs_error      REAL,           -- NULL stands for NaN
  compile_s          REAL NOT NULL,
  check_s            REAL NOT NULL,
  time_s             REAL NOT NULL,
  compile_cached     INTEGER NOT NULL,
  stored             TEXT NOT NULL,
  UNIQUE (run_id, workload, solution, sample)
);

CREATE TABLE IF NOT EXISTS calibrations (
  id            INTEGER PRIMARY KEY AUTOINCREMENT,
  backend       TEXT NOT NULL,
  device        TEXT NOT NULL,
  created       TEXT NOT NULL,
  bandwidth_gbs REAL NOT NULL,
  peak_gflops   REAL NOT NULL,
  data          TEXT NOT NULL  -- the whole runtime::Calibration as JSON
);
CREATE INDEX IF NOT EXISTS calibrations_by_device ON calibrations(backend, device);
)sql";

// Schema 1 -> 2: where the result came from and what producing it cost (eval::Provenance), NULL
// for results without a .meta.json and for every result stored before.
constexpr const char* kAddLedger = R"sql(
ALTER TABLE results ADD COLUMN method        TEXT;
ALTER TABLE results ADD COLUMN model         TEXT;
ALTER TABLE results ADD COLUMN llm_calls     INTEGER;
ALTER TABLE results ADD COLUMN input_tokens  INTEGER;
ALTER TABLE results ADD COLUMN output_tokens INTEGER;
ALTER TABLE results ADD COLUMN cost_usd      REAL;
ALTER TABLE results ADD COLUMN evaluations   INTEGER;
ALTER TABLE results ADD COLUMN wall_s        REAL;
)sql";

// Schema 2 -> 3: the worst element's error as a fraction of its allowed error (NULL for results
// stored before, for those that compared no output, and for an infinite ratio); the speedup's 95%
// interval and the share of CPU time stolen by the hypervisor while timing (NULL when not timed or
// unknown).
constexpr const char* kAddErrorRatio = R"sql(
ALTER TABLE results ADD COLUMN max_error_ratio REAL;
ALTER TABLE results ADD COLUMN speedup_low     REAL;
ALTER TABLE results ADD COLUMN speedup_high    REAL;
ALTER TABLE results ADD COLUMN cpu_steal       REAL;
)sql";

// Schema 3 -> 4: what the result's speedup was measured against (eval::BaselineInfo as JSON);
// NULL for the native default, which every result stored before was measured against.
constexpr const char* kAddBaseline = R"sql(
ALTER TABLE results ADD COLUMN baseline TEXT;
)sql";

// Schema 4 -> 5: the harness thread's own CPU time in the timing phase (eval::EvalCost::time_cpu_s);
// NULL for results stored before.
constexpr const char* kAddTimeCpu = R"sql(
ALTER TABLE results ADD COLUMN time_cpu_s REAL;
)sql";

// kMigrations[v] takes a database at schema version v to v + 1 (0: a new, empty file).
constexpr const char* kMigrations[kSchemaVersion] = {kSchema, kAddLedger, kAddErrorRatio, kAddBaseline,
                                                      kAddTimeCpu};

constexpr const char* kResultColumns =
    "workload, solution, sample, task, backend, compiled, correct, error, message, "
    "time_median_ms, time_p25_ms, time_p75_ms, time_runs, "
    "baseline_median_ms, baseline_p25_ms, baseline_p75_ms, baseline_runs, "
    "speedup, max_abs_error, compile_s, check_s, time_s, compile_cached, "
    "method, model, llm_calls, input_tokens, output_tokens, cost_usd, evaluations, wall_s, max_error_ratio, "
    "speedup_low, speedup_high, cpu_steal, baseline, time_cpu_s";
constexpr int kResultColumnCount = 37;

constexpr const char* kRunColumns =
    "r.id, r.created, r.backend, r.device, r.options, r.solutions_dir, r.selection, r.finished, "
    "(SELECT COUNT(*) FROM results WHERE run_id = r.id), "
    "(SELECT COUNT(*) FROM results WHERE run_id = r.id AND correct)";

// WAL: readers (ekb report) never block the writer, and a killed writer leaves the database
// consistent. Switching a new file to WAL needs an exclusive lock that SQLite does not wait for
// (the busy timeout does not apply), so two processes opening a new file at once retry here.
void enable_wal(SQLite::Database& db) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(kBusyTimeoutMs);
  for (;;) {
    try {
      if (db.execAndGet("PRAGMA journal_mode = WAL").getString() == "wal") return;
    } catch (const SQLite::Exception& e) {
      if (e.getErrorCode() != SQLITE_BUSY && e.getErrorCode() != SQLITE_LOCKED) throw;
    }
    if (std::chrono::steady_clock::now() > deadline)
      throw StoreError(db.getFilename() + ": could not switch to WAL mode: the database stays locked");
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

std::string run_params(const RunSpec& s) {
  // nlohmann::json orders object keys, so equal parameters dump to equal text.
  nlohmann::json j = {{"backend", s.backend},
                      {"device", s.device},
                      {"options", s.options},
                      {"solutions_dir", s.solutions_dir},
                      {"selection", s.selection}};
  return j.dump();
}

std::string generated_run_id() {
  std::string stamp = runtime::utc_timestamp_now();  // 2024-05-01T12:34:56Z -> 20240501-123456
  std::string compact;
  for (char c : stamp)
    if (std::isdigit(static_cast<unsigned char>(c))) compact += c;
  std::random_device rd;
  return fmt::format("{}-{}-{:04x}", compact.substr(0, 8), compact.substr(8), rd() & 0xffff);
}

// NULL for nullopt and for NaN (which SQLite cannot store as a REAL).
void bind_optional(SQLite::Statement& q, int index, const std::optional<double>& v) {
  if (v && !std::isnan(*v)) q.bind(index, *v);
  else q.bind(index);  // NULL
}

void bind_time(SQLite::Statement& q, int first, const std::optional<eval::TimeStats>& t) {
  if (t) {
    q.bind(first, t->median_ms);
    q.bind(first + 1, t->p25_ms);
    q.bind(first + 2, t->p75_ms);
    q.bind(first + 3, t->runs);
  } else {
    for (int i = 0; i < 4; ++i) q.bind(first + i);
  }
}

std::optional<eval::TimeStats> column_time(SQLite::Statement& q, int first) {
  if (q.getColumn(first).isNull()) return std::nullopt;
  eval::TimeStats t;
  t.median_ms = q.getColumn(first).getDouble();
  t.p25_ms = q.getColumn(first + 1).getDouble();
  t.p75_ms = q.getColumn(first + 2).getDouble();
  t.runs = q.getColumn(first + 3).getInt();
  return t;
}

// The 8 columns method .. wall_s; all NULL without provenance.
void bind_provenance(SQLite::Statement& q, int first, const std::optional<eval::Provenance>& p) {
  if (!p) {
    for (int i = 0; i < 8; ++i) q.bind(first + i);
    return;
  }
  q.bind(first, p->method);
  q.bind(first + 1, p->model);
  q.bind(first + 2, p->ledger.llm_calls);
  q.bind(first + 3, p->ledger.input_tokens);
  q.bind(first + 4, p->ledger.output_tokens);
  q.bind(first + 5, p->ledger.cost_usd);
  q.bind(first + 6, p->ledger.evaluations);
  q.bind(first + 7, p->ledger.wall_s);
}

std::optional<eval::Provenance> column_provenance(SQLite::Statement& q, int first) {
  if (q.getColumn(first).isNull()) return std::nullopt;
  eval::Provenance p;
  p.method = q.getColumn(first).getString();
  p.model = q.getColumn(first + 1).getString();
  p.ledger.llm_calls = q.getColumn(first + 2).getInt64();
  p.ledger.input_tokens = q.getColumn(first + 3).getInt64();
  p.ledger.output_tokens = q.getColumn(first + 4).getInt64();
  p.ledger.cost_usd = q.getColumn(first + 5).getDouble();
  p.ledger.evaluations = q.getColumn(first + 6).getInt64();
  p.ledger.wall_s = q.getColumn(first + 7).getDouble();
  return p;
}

RunInfo run_from_row(SQLite::Statement& q) {
  RunInfo r;
  r.id = q.getColumn(0).getString();
  r.created = q.getColumn(1).getString();
  r.backend = q.getColumn(2).getString();
  r.device = nlohmann::json::parse(q.getColumn(3).getString());
  r.options = nlohmann::json::parse(q.getColumn(4).getString());
  r.solutions_dir = q.getColumn(5).getString();
  r.selection = nlohmann::json::parse(q.getColumn(6).getString());
  if (!q.getColumn(7).isNull()) r.finished = q.getColumn(7).getString();
  r.results = q.getColumn(8).getInt();
  r.correct = q.getColumn(9).getInt();
  return r;
}

}  // namespace

std::string default_db_path() {
  const char* env = std::getenv("EKB_DB");
  return env && *env ? env : "ekb-results.db";
}

std::vector<std::string> RunInfo::selected_workloads() const {
  std::vector<std::string> out;
  if (selection.is_object() && selection.contains("workloads") && selection["workloads"].is_array())
    for (const auto& w : selection["workloads"]) out.push_back(w.get<std::string>());
  return out;
}

struct ResultStore::Impl {
  std::string path;
  SQLite::Database db;
  Impl(const std::string& p) : path(p), db(p, SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE) {}
};

ResultStore::ResultStore(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
ResultStore::ResultStore(ResultStore&&) noexcept = default;
ResultStore& ResultStore::operator=(ResultStore&&) noexcept = default;
ResultStore::~ResultStore() = default;

const std::string& ResultStore::path() const { return impl_->path; }

ResultStore ResultStore::open(const std::string& path) {
  try {
    auto impl = std::make_unique<Impl>(path);
    auto& db = impl->db;
    db.setBusyTimeout(kBusyTimeoutMs);  // a concurrent `ekb report` or second writer waits, not fails
    enable_wal(db);
    db.exec(kPragmas);
    int version = db.execAndGet("PRAGMA user_version").getInt();
    if (version > kSchemaVersion)
      throw StoreError(fmt::format("{}: results schema {} is newer than this ekb understands ({})", path,
                                   version, kSchemaVersion));
    if (version < kSchemaVersion) {
      // A new file gets every step, an older database the steps it lacks. The version is read again
      // under the write lock: a second process racing to migrate the same file finds it done.
      SQLite::Transaction migrate(db, SQLite::TransactionBehavior::IMMEDIATE);
      for (int v = db.execAndGet("PRAGMA user_version").getInt(); v < kSchemaVersion; ++v) db.exec(kMigrations[v]);
      db.exec(fmt::format("PRAGMA user_version = {}", kSchemaVersion));
      migrate.commit();
    }
    return ResultStore(std::move(impl));
  } catch (const SQLite::Exception& e) {
    throw StoreError(fmt::format("{}: {}", path, e.what()));
  }
}

std::string ResultStore::begin_or_resume_run(const RunSpec& spec) {
  auto& db = impl_->db;
  const std::string params = run_params(spec);
  // IMMEDIATE: two processes starting the same run cannot both decide to create it.
  SQLite::Transaction tx(db, SQLite::TransactionBehavior::IMMEDIATE);
  std::string id = spec.id;
  if (!id.empty()) {
    SQLite::Statement q(db, "SELECT params FROM runs WHERE id = ?");
    q.bind(1, id);
    if (q.executeStep()) {
      if (q.getColumn(0).getString() != params)
        throw StoreError(fmt::format("run '{}' already exists with other parameters ({}); use another run id",
                                     id, q.getColumn(0).getString()));
      return id;  // committing nothing: the transaction rolls back harmlessly
    }
  } else {
    SQLite::Statement q(db, "SELECT id FROM runs WHERE params = ? AND finished IS NULL ORDER BY created DESC, rowid DESC LIMIT 1");
    q.bind(1, params);
    if (q.executeStep()) return q.getColumn(0).getString();
    do {
      id = generated_run_id();
    } while (run(id));
  }
  SQLite::Statement insert(db,
                           "INSERT INTO runs (id, created, backend, device, options, solutions_dir, selection, params) "
                           "VALUES (?, ?, ?, ?, ?, ?, ?, ?)");
  insert.bind(1, id);
  insert.bind(2, runtime::utc_timestamp_now());
  insert.bind(3, spec.backend);
  insert.bind(4, spec.device.dump());
  insert.bind(5, spec.options.dump());
  insert.bind(6, spec.solutions_dir);
  insert.bind(7, spec.selection.dump());
  insert.bind(8, params);
  insert.exec();
  tx.commit();
  return id;
}

void ResultStore::finish_run(const std::string& run) {
  SQLite::Statement q(impl_->db, "UPDATE runs SET finished = ? WHERE id = ?");
  q.bind(1, runtime::utc_timestamp_now());
  q.bind(2, run);
  if (q.exec() == 0) throw StoreError(fmt::format("no run '{}' in {}", run, impl_->path));
}

void ResultStore::record_load(const std::string& run, double max_load_average, unsigned cores) {
  SQLite::Transaction tx(impl_->db, SQLite::TransactionBehavior::IMMEDIATE);
  SQLite::Statement q(impl_->db, "SELECT device FROM runs WHERE id = ?");
  q.bind(1, run);
  if (!q.executeStep()) throw StoreError(fmt::format("no run '{}' in {}", run, impl_->path));
  nlohmann::json device = nlohmann::json::parse(q.getColumn(0).getString(), nullptr, false);
  if (!device.is_object()) device = nlohmann::json::object();
  device["load"] = {{"max_1min_average", max_load_average}, {"cores", cores}};
  SQLite::Statement u(impl_->db, "UPDATE runs SET device = ? WHERE id = ?");
  u.bind(1, device.dump());
  u.bind(2, run);
  u.exec();
  tx.commit();
}

std::optional<RunInfo> ResultStore::run(std::string_view id) const {
  SQLite::Statement q(impl_->db, fmt::format("SELECT {} FROM runs r WHERE r.id = ?", kRunColumns));
  q.bind(1, std::string(id));
  if (!q.executeStep()) return std::nullopt;
  return run_from_row(q);
}

std::vector<RunInfo> ResultStore::runs() const {
  SQLite::Statement q(impl_->db, fmt::format("SELECT {} FROM runs r ORDER BY r.created DESC, r.rowid DESC", kRunColumns));
  std::vector<RunInfo> out;
  while (q.executeStep()) out.push_back(run_from_row(q));
  return out;
}

std::string ResultStore::resolve_run(std::string_view id) const {
  std::vector<RunInfo> all = runs();
  if (all.empty()) throw StoreError(fmt::format("{} holds no runs", impl_->path));
  if (id == "last" || id == "latest") return all.front().id;
  for (const auto& r : all)
    if (r.id == id) return r.id;
  std::string known;
  for (size_t i = 0; i < all.size() && i < 5; ++i) known += (i ? ", " : "") + all[i].id;
  throw StoreError(fmt::format("no run '{}' in {} (newest: {}{}; `ekb runs` lists them all)", id, impl_->path,
                               known, all.size() > 5 ? ", ..." : ""));
}

bool ResultStore::is_done(const std::string& run, const std::string& workload, const std::string& solution,
                          int sample) const {
  SQLite::Statement q(impl_->db,
                      "SELECT 1 FROM results WHERE run_id = ? AND workload = ? AND solution = ? AND sample = ?");
  q.bind(1, run);
  q.bind(2, workload);
  q.bind(3, solution);
  q.bind(4, sample);
  return q.executeStep();
}

std::set<ResultKey> ResultStore::done(const std::string& run) const {
  SQLite::Statement q(impl_->db, "SELECT workload, solution, sample FROM results WHERE run_id = ?");
  q.bind(1, run);
  std::set<ResultKey> out;
  while (q.executeStep())
    out.insert({q.getColumn(0).getString(), q.getColumn(1).getString(), q.getColumn(2).getInt()});
  return out;
}

bool ResultStore::add(const std::string& run, const eval::CandidateResult& r) {
  static const std::string sql = [] {
    std::string placeholders;
    for (int i = 0; i < kResultColumnCount; ++i) placeholders += ", ?";
    // ON CONFLICT DO NOTHING: re-adding a (workload, solution, sample) cannot duplicate it.
    return fmt::format("INSERT INTO results (run_id, stored, {}) VALUES (?, ?{}) "
                       "ON CONFLICT (run_id, workload, solution, sample) DO NOTHING",
                       kResultColumns, placeholders);
  }();
  // A lost device says nothing about the candidate: it is evaluated again, never stored as failed.
  if (r.error == eval::ErrorKind::Device)
    throw StoreError("a device error is not a result (" + r.workload + " " + r.solution + ": " + r.message + ")");
  try {
    // One statement, one implicit transaction: the row is either fully committed or absent.
    SQLite::Statement q(impl_->db, sql);
    int i = 1;
    q.bind(i++, run);
    q.bind(i++, runtime::utc_timestamp_now());
    q.bind(i++, r.workload);
    q.bind(i++, r.solution);
    q.bind(i++, r.sample);
    q.bind(i++, r.task);
    q.bind(i++, r.backend);
    q.bind(i++, r.compiled ? 1 : 0);
    q.bind(i++, r.correct ? 1 : 0);
    if (r.error == eval::ErrorKind::None) q.bind(i++);
    else q.bind(i++, std::string(eval::error_kind_name(r.error)));
    q.bind(i++, r.message);
    bind_time(q, i, r.time);
    i += 4;
    bind_time(q, i, r.baseline);
    i += 4;
    bind_optional(q, i++, r.speedup);
    bind_optional(q, i++, r.max_abs_error);
    q.bind(i++, r.cost.compile_s);
    q.bind(i++, r.cost.check_s);
    q.bind(i++, r.cost.time_s);
    q.bind(i++, r.cost.compile_cached ? 1 : 0);
    bind_provenance(q, i, r.provenance);
    i += 8;
    // An infinite ratio (a NaN or integer mismatch) is stored as NULL, as the JSON writes it.
    if (r.max_error_ratio && std::isfinite(*r.max_error_ratio)) q.bind(i++, *r.max_error_ratio);
    else q.bind(i++);
    bind_optional(q, i++, r.speedup ? std::optional<double>(r.speedup_low) : std::nullopt);
    bind_optional(q, i++, r.speedup ? std::optional<double>(r.speedup_high) : std::nullopt);
    bind_optional(q, i++, r.cpu_steal >= 0 ? std::optional<double>(r.cpu_steal) : std::nullopt);
    if (r.baseline_info.is_native_default()) q.bind(i++);
    else q.bind(i++, eval::to_json(r.baseline_info).dump());
    q.bind(i++, r.cost.time_cpu_s);
    return q.exec() == 1;
  } catch (const SQLite::Exception& e) {
    if (!this->run(run)) throw StoreError(fmt::format("no run '{}' in {}", run, impl_->path));
    throw StoreError(fmt::format("{}: storing {} {}#{}: {}", impl_->path, r.workload, r.solution, r.sample, e.what()));
  }
}

std::vector<eval::CandidateResult> ResultStore::results(const std::string& run) const {
  SQLite::Statement q(impl_->db, fmt::format("SELECT {} FROM results WHERE run_id = ? ORDER BY seq", kResultColumns));
  q.bind(1, run);
  std::vector<eval::CandidateResult> out;
  while (q.executeStep()) {
    eval::CandidateResult r;
    r.workload = q.getColumn(0).getString();
    r.solution = q.getColumn(1).getString();
    r.sample = q.getColumn(2).getInt();
    r.task = q.getColumn(3).getString();
    r.backend = q.getColumn(4).getString();
    r.compiled = q.getColumn(5).getInt() != 0;
    r.correct = q.getColumn(6).getInt() != 0;
    // An error kind this ekb does not know (written by a newer one) reads as internal.
    if (!q.getColumn(7).isNull())
      r.error = eval::parse_error_kind(q.getColumn(7).getString()).value_or(eval::ErrorKind::Internal);
    r.message = q.getColumn(8).getString();
    r.time = column_time(q, 9);
    r.baseline = column_time(q, 13);
    if (!q.getColumn(17).isNull()) r.speedup = q.getColumn(17).getDouble();
    r.max_abs_error = q.getColumn(18).isNull() ? std::numeric_limits<double>::quiet_NaN() : q.getColumn(18).getDouble();
    r.cost.compile_s = q.getColumn(19).getDouble();
    r.cost.check_s = q.getColumn(20).getDouble();
    r.cost.time_s = q.getColumn(21).getDouble();
    r.cost.compile_cached = q.getColumn(22).getInt() != 0;
    r.provenance = column_provenance(q, 23);
    if (!q.getColumn(31).isNull()) r.max_error_ratio = q.getColumn(31).getDouble();
    if (!q.getColumn(32).isNull()) r.speedup_low = q.getColumn(32).getDouble();
    if (!q.getColumn(33).isNull()) r.speedup_high = q.getColumn(33).getDouble();
    if (!q.getColumn(34).isNull()) r.cpu_steal = q.getColumn(34).getDouble();
    if (!q.getColumn(35).isNull())
      r.baseline_info = eval::baseline_info_from_json(nlohmann::json::parse(q.getColumn(35).getString()));
    if (!q.getColumn(36).isNull()) r.cost.time_cpu_s = q.getColumn(36).getDouble();
    out.push_back(std::move(r));
  }
  return out;
}

void ResultStore::add_calibration(const runtime::Calibration& c) {
  SQLite::Statement q(impl_->db,
                      "INSERT INTO calibrations (backend, device, created, bandwidth_gbs, peak_gflops, data) "
                      "VALUES (?, ?, ?, ?, ?, ?)");
  q.bind(1, c.backend);
  q.bind(2, c.device);
  q.bind(3, c.created);
  q.bind(4, c.bandwidth_gbs.best);
  q.bind(5, c.peak_gflops.best);
  q.bind(6, runtime::to_json(c).dump());
  q.exec();
}

std::optional<runtime::Calibration> ResultStore::calibration(const std::string& backend, const std::string& device) const {
  SQLite::Statement q(impl_->db,
                      "SELECT data FROM calibrations WHERE backend = ? AND device = ? ORDER BY created DESC, id DESC LIMIT 1");
  q.bind(1, backend);
  q.bind(2, device);
  if (!q.executeStep()) return std::nullopt;
  return runtime::calibration_from_json(nlohmann::json::parse(q.getColumn(0).getString()));
}

}  // namespace ekb::results
