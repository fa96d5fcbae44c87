// The PostgreSQL engine of the results store (libpq): one server that the shards of a run share,
// wherever they run (docs/SCALE_OUT.md). Each statement outside write_transaction commits on its
// own, so a shard killed at any moment leaves every result it added and nothing half-written.
#include <fmt/core.h>
#include <libpq-fe.h>

#include <charconv>
#include <cmath>
#include <cstdlib>

#include "results/result_store.h"
#include "results/store_database.h"

namespace ekb::results {

namespace {

// The store's tables in PostgreSQL's types: those of the SQLite schema (sqlite_database.cpp) at
// its newest version, with IDENTITY for AUTOINCREMENT. `runs.seq` orders runs created in the same
// second, as SQLite's rowid does; runs_by_params is a hash index because a run's parameters
// (its selection names every workload) outgrow a B-tree entry.
constexpr const char* kSchema = R"sql(
CREATE TABLE runs (
  seq           BIGINT GENERATED ALWAYS AS IDENTITY,
  id            TEXT PRIMARY KEY,
  created       TEXT NOT NULL,
  backend       TEXT NOT NULL,
  device        TEXT NOT NULL,
  options       TEXT NOT NULL,
  solutions_dir TEXT NOT NULL,
  selection     TEXT NOT NULL,
  params        TEXT NOT NULL,
  finished      TEXT
);
CREATE INDEX runs_by_params ON runs USING hash (params);

CREATE TABLE results (
  seq                BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  run_id             TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  workload           TEXT NOT NULL,
  solution           TEXT NOT NULL,
  sample             BIGINT NOT NULL,
  task               TEXT NOT NULL,
  backend            TEXT NOT NULL,
  compiled           BIGINT NOT NULL,
  correct            BIGINT NOT NULL,
  error              TEXT,
  message            TEXT NOT NULL,
  time_median_ms     DOUBLE PRECISION,
  time_p25_ms        DOUBLE PRECISION,
  time_p75_ms        DOUBLE PRECISION,
  time_runs          BIGINT,
  baseline_median_ms DOUBLE PRECISION,
  baseline_p25_ms    DOUBLE PRECISION,
  baseline_p75_ms    DOUBLE PRECISION,
  baseline_runs      BIGINT,
  speedup            DOUBLE PRECISION,
  max_abs_error      DOUBLE PRECISION,
  compile_s          DOUBLE PRECISION NOT NULL,
  check_s            DOUBLE PRECISION NOT NULL,
  time_s             DOUBLE PRECISION NOT NULL,
  compile_cached     BIGINT NOT NULL,
  stored             TEXT NOT NULL,
  method             TEXT,
  model              TEXT,
  llm_calls          BIGINT,
  input_tokens       BIGINT,
  output_tokens      BIGINT,
  cost_usd           DOUBLE PRECISION,
  evaluations        BIGINT,
  wall_s             DOUBLE PRECISION,
  max_error_ratio    DOUBLE PRECISION,
  speedup_low        DOUBLE PRECISION,
  speedup_high       DOUBLE PRECISION,
  cpu_steal          DOUBLE PRECISION,
  baseline           TEXT,
  time_cpu_s         DOUBLE PRECISION,
  device             TEXT,
  UNIQUE (run_id, workload, solution, sample)
);

CREATE TABLE calibrations (
  id            BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  backend       TEXT NOT NULL,
  device        TEXT NOT NULL,
  created       TEXT NOT NULL,
  bandwidth_gbs DOUBLE PRECISION NOT NULL,
  peak_gflops   DOUBLE PRECISION NOT NULL,
  data          TEXT NOT NULL
);
CREATE INDEX calibrations_by_device ON calibrations(backend, device);

CREATE TABLE shards (
  run_id   TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  shard    BIGINT NOT NULL,
  shards   BIGINT NOT NULL,
  host     TEXT NOT NULL,
  device   TEXT NOT NULL,
  planned  BIGINT NOT NULL,
  started  TEXT NOT NULL,
  finished TEXT,
  PRIMARY KEY (run_id, shard, shards)
);

CREATE TABLE ekb_schema (version INTEGER NOT NULL);
)sql";

// The advisory lock every write transaction takes: what SQLite's BEGIN IMMEDIATE is to a file.
constexpr long long kWriterLock = 0x656b62;  // "ekb"

// PostgreSQL's type ids (catalog/pg_type_d.h, stable across versions) of the columns read back.
constexpr Oid kBool = 16, kInt8 = 20, kInt2 = 21, kInt4 = 23, kFloat4 = 700, kFloat8 = 701, kNumeric = 1700;

// `?` placeholders as PostgreSQL's $1, $2, ... (the store's SQL has no `?` inside literals).
std::string numbered_placeholders(std::string_view sql) {
  std::string out;
  int n = 0;
  for (char c : sql) {
    if (c == '?') out += fmt::format("${}", ++n);
    else out += c;
  }
  return out;
}

// Text PostgreSQL accepts: no NUL, valid UTF-8 (a compiler's message may hold stray bytes). Each
// invalid byte becomes U+FFFD, as a JSON dump with the replace handler writes it.
std::string storable_text(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    const unsigned char c = s[i];
    int len = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xe ? 3 : (c >> 3) == 0x1e ? 4 : 0;
    bool valid = len > 0 && i + len <= s.size();
    for (int k = 1; valid && k < len; ++k) valid = (static_cast<unsigned char>(s[i + k]) & 0xc0) == 0x80;
    if (c == 0) {
      ++i;
    } else if (valid) {
      out.append(s, i, len);
      i += len;
    } else {
      out += "\xef\xbf\xbd";
      ++i;
    }
  }
  return out;
}

std::string parameter_text(const SqlValue& v) {
  if (auto* i = std::get_if<std::int64_t>(&v)) return std::to_string(*i);
  if (auto* d = std::get_if<double>(&v)) {
    if (std::isinf(*d)) return *d > 0 ? "Infinity" : "-Infinity";
    return fmt::format("{}", *d);  // the shortest text that reads back as the same double
  }
  return storable_text(std::get<std::string>(v));
}

SqlValue column_value(const PGresult* res, int row, int column) {
  if (PQgetisnull(res, row, column)) return {};
  const char* text = PQgetvalue(res, row, column);
  switch (PQftype(res, column)) {
    case kBool: return std::int64_t{text[0] == 't'};
    case kInt2:
    case kInt4:
    case kInt8: return static_cast<std::int64_t>(std::strtoll(text, nullptr, 10));
    case kFloat4:
    case kFloat8:
    case kNumeric: return std::strtod(text, nullptr);  // also reads "Infinity"
    default: return std::string(text);
  }
}

struct ResultDeleter {
  void operator()(PGresult* r) const { PQclear(r); }
};
using Result = std::unique_ptr<PGresult, ResultDeleter>;

class PostgresDatabase final : public StoreDatabase {
 public:
  PostgresDatabase(const std::string& url, std::string printable) : printable_(std::move(printable)) {
    conn_ = PQconnectdb(url.c_str());
    if (PQstatus(conn_) != CONNECTION_OK) {
      std::string why = PQerrorMessage(conn_);
      PQfinish(conn_);
      conn_ = nullptr;
      throw StoreError(fmt::format("{}: cannot connect: {}", printable_, trimmed(why)));
    }
    PQsetNoticeProcessor(conn_, [](void*, const char*) {}, nullptr);  // CREATE ... IF NOT EXISTS chatter
    if (PQsetClientEncoding(conn_, "UTF8") != 0)
      throw StoreError(fmt::format("{}: cannot use UTF-8: {}", printable_, trimmed(PQerrorMessage(conn_))));
    create_schema();
  }
  ~PostgresDatabase() override {
    if (conn_) PQfinish(conn_);
  }

  std::vector<SqlRow> query(std::string_view sql, const std::vector<SqlValue>& params) override {
    Result res = run(sql, params);
    std::vector<SqlRow> rows(PQntuples(res.get()));
    for (int r = 0; r < static_cast<int>(rows.size()); ++r) {
      rows[r].reserve(PQnfields(res.get()));
      for (int c = 0; c < PQnfields(res.get()); ++c) rows[r].push_back(column_value(res.get(), r, c));
    }
    return rows;
  }

  long execute(std::string_view sql, const std::vector<SqlValue>& params) override {
    Result res = run(sql, params);
    const char* changed = PQcmdTuples(res.get());
    return *changed ? std::strtol(changed, nullptr, 10) : 0;
  }

  void write_transaction(const std::function<void()>& body) override {
    run("BEGIN", {});
    try {
      run(fmt::format("SELECT pg_advisory_xact_lock({})", kWriterLock), {});
      body();
      run("COMMIT", {});
    } catch (...) {
      PQclear(PQexec(conn_, "ROLLBACK"));
      throw;
    }
  }

  std::string_view run_insertion_order() const override { return "seq"; }

 private:
  static std::string trimmed(std::string s) {
    while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
    return s;
  }

  Result run(std::string_view sql, const std::vector<SqlValue>& params) {
    std::vector<std::string> texts(params.size());
    std::vector<const char*> values(params.size(), nullptr);
    for (size_t i = 0; i < params.size(); ++i) {
      if (std::holds_alternative<std::monostate>(params[i])) continue;
      texts[i] = parameter_text(params[i]);
      values[i] = texts[i].c_str();
    }
    const std::string statement = numbered_placeholders(sql);
    Result res(PQexecParams(conn_, statement.c_str(), static_cast<int>(params.size()), nullptr, values.data(), nullptr,
                            nullptr, 0));
    const ExecStatusType status = res ? PQresultStatus(res.get()) : PGRES_FATAL_ERROR;
    if (status != PGRES_COMMAND_OK && status != PGRES_TUPLES_OK)
      throw StoreError(fmt::format("{}: {}", printable_, trimmed(PQerrorMessage(conn_))));
    return res;
  }

  // Creates the tables on first use; the version check and the creation hold the writers' lock,
  // so shards opening a new database at once create it once.
  void create_schema() {
    write_transaction([&] {
      auto exists = query("SELECT to_regclass('ekb_schema') IS NOT NULL", {});
      if (std::get<std::int64_t>(exists[0][0]) == 0) {
        Result res(PQexec(conn_, kSchema));
        if (PQresultStatus(res.get()) != PGRES_COMMAND_OK)
          throw StoreError(fmt::format("{}: creating the results schema: {}", printable_, trimmed(PQerrorMessage(conn_))));
        execute("INSERT INTO ekb_schema (version) VALUES (?)", {std::int64_t{kStoreSchemaVersion}});
        return;
      }
      const auto version = std::get<std::int64_t>(query("SELECT MAX(version) FROM ekb_schema", {})[0][0]);
      if (version > kStoreSchemaVersion)
        throw StoreError(fmt::format("{}: results schema {} is newer than this ekb understands ({})", printable_,
                                     version, kStoreSchemaVersion));
    });
  }

  std::string printable_;
  PGconn* conn_ = nullptr;
};

}  // namespace

std::unique_ptr<StoreDatabase> open_postgres_database(const std::string& url, const std::string& printable) {
  return std::make_unique<PostgresDatabase>(url, printable);
}

}  // namespace ekb::results
