// The SQLite engine of the results store: one file, WAL, each commit durable.
#include <SQLiteCpp/SQLiteCpp.h>
#include <fmt/core.h>
#include <sqlite3.h>

#include <chrono>
#include <thread>

#include "results/result_store.h"
#include "results/store_database.h"

namespace ekb::results {

namespace {

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

// Schema 5 -> 6: the device name each result was measured on (shards of one run may run on
// different machines; NULL: the run's device), and each shard's progress (docs/SCALE_OUT.md).
constexpr const char* kAddShards = R"sql(
ALTER TABLE results ADD COLUMN device TEXT;
CREATE TABLE IF NOT EXISTS shards (
  run_id   TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  shard    INTEGER NOT NULL,  -- I of I/N
  shards   INTEGER NOT NULL,  -- N
  host     TEXT NOT NULL,
  device   TEXT NOT NULL,
  planned  INTEGER NOT NULL,  -- results this shard owns
  started  TEXT NOT NULL,
  finished TEXT,
  PRIMARY KEY (run_id, shard, shards)
);
)sql";

// kMigrations[v] takes a database at schema version v to v + 1 (0: a new, empty file).
constexpr const char* kMigrations[kStoreSchemaVersion] = {kSchema,      kAddLedger,  kAddErrorRatio,
                                                          kAddBaseline, kAddTimeCpu, kAddShards};

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

class SqliteDatabase final : public StoreDatabase {
 public:
  explicit SqliteDatabase(const std::string& path) : db_(path, SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE) {
    db_.setBusyTimeout(kBusyTimeoutMs);  // a concurrent `ekb report` or second writer waits, not fails
    enable_wal(db_);
    db_.exec(kPragmas);
    int version = db_.execAndGet("PRAGMA user_version").getInt();
    if (version > kStoreSchemaVersion)
      throw StoreError(fmt::format("{}: results schema {} is newer than this ekb understands ({})", path, version,
                                   kStoreSchemaVersion));
    if (version < kStoreSchemaVersion) {
      // A new file gets every step, an older database the steps it lacks. The version is read again
      // under the write lock: a second process racing to migrate the same file finds it done.
      SQLite::Transaction migrate(db_, SQLite::TransactionBehavior::IMMEDIATE);
      for (int v = db_.execAndGet("PRAGMA user_version").getInt(); v < kStoreSchemaVersion; ++v)
        db_.exec(kMigrations[v]);
      db_.exec(fmt::format("PRAGMA user_version = {}", kStoreSchemaVersion));
      migrate.commit();
    }
  }

  std::vector<SqlRow> query(std::string_view sql, const std::vector<SqlValue>& params) override try {
    SQLite::Statement q = prepare(sql, params);
    std::vector<SqlRow> rows;
    while (q.executeStep()) {
      SqlRow row(q.getColumnCount());
      for (int i = 0; i < q.getColumnCount(); ++i) {
        SQLite::Column c = q.getColumn(i);
        if (c.isInteger()) row[i] = static_cast<std::int64_t>(c.getInt64());
        else if (c.isFloat()) row[i] = c.getDouble();
        else if (!c.isNull()) row[i] = c.getString();
      }
      rows.push_back(std::move(row));
    }
    return rows;
  } catch (const SQLite::Exception& e) {
    throw StoreError(fmt::format("{}: {}", db_.getFilename(), e.what()));
  }

  long execute(std::string_view sql, const std::vector<SqlValue>& params) override try {
    return prepare(sql, params).exec();
  } catch (const SQLite::Exception& e) {
    throw StoreError(fmt::format("{}: {}", db_.getFilename(), e.what()));
  }

  void write_transaction(const std::function<void()>& body) override {
    // IMMEDIATE takes the write lock at BEGIN, so what `body` reads no other writer changes.
    SQLite::Transaction tx(db_, SQLite::TransactionBehavior::IMMEDIATE);
    body();
    tx.commit();
  }

  std::string_view run_insertion_order() const override { return "rowid"; }

 private:
  SQLite::Statement prepare(std::string_view sql, const std::vector<SqlValue>& params) {
    SQLite::Statement q(db_, std::string(sql));
    for (size_t i = 0; i < params.size(); ++i) {
      const int index = static_cast<int>(i) + 1;
      std::visit(
          [&](const auto& v) {
            using T = std::decay_t<decltype(v)>;
            if constexpr (std::is_same_v<T, std::monostate>) q.bind(index);
            else if constexpr (std::is_same_v<T, std::int64_t>) q.bind(index, static_cast<int64_t>(v));
            else q.bind(index, v);
          },
          params[i]);
    }
    return q;
  }

  SQLite::Database db_;
};

}  // namespace

std::unique_ptr<StoreDatabase> open_sqlite_database(const std::string& path) {
  try {
    return std::make_unique<SqliteDatabase>(path);
  } catch (const SQLite::Exception& e) {
    throw StoreError(fmt::format("{}: {}", path, e.what()));
  }
}

}  // namespace ekb::results
