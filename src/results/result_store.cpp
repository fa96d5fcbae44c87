#include "results/result_store.h"

#include <fmt/core.h>

#include <cctype>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <random>

#include "results/store_database.h"

namespace ekb::results {

namespace {

// Both engines hold these columns of `results` (store_database.h), read and written in this order.
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
    "(SELECT COUNT(*) FROM results WHERE run_id = r.id AND correct <> 0)";

std::string run_params(const RunSpec& s) {
  // nlohmann::json orders object keys, so equal parameters dump to equal text.
  nlohmann::json j = {{"backend", s.backend},
                      {"options", s.options},
                      {"solutions_dir", s.solutions_dir},
                      {"selection", s.selection}};
  // The shards of one run may run on different machines: each result records its own device.
  if (s.sharded) j["sharded"] = true;
  else j["device"] = s.device;
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

// NULL for nullopt and for NaN (which neither engine stores as a number).
SqlValue optional_number(const std::optional<double>& v) {
  if (v && !std::isnan(*v)) return *v;
  return {};
}
SqlValue flag(bool b) { return std::int64_t{b ? 1 : 0}; }

bool is_null(const SqlValue& v) { return std::holds_alternative<std::monostate>(v); }
std::int64_t as_integer(const SqlValue& v) {
  if (auto* i = std::get_if<std::int64_t>(&v)) return *i;
  if (auto* d = std::get_if<double>(&v)) return static_cast<std::int64_t>(*d);
  return 0;
}
double as_number(const SqlValue& v) {
  if (auto* d = std::get_if<double>(&v)) return *d;
  if (auto* i = std::get_if<std::int64_t>(&v)) return static_cast<double>(*i);
  return std::numeric_limits<double>::quiet_NaN();
}
std::string as_text(const SqlValue& v) {
  if (auto* s = std::get_if<std::string>(&v)) return *s;
  return "";
}
std::optional<double> number_or_null(const SqlValue& v) {
  return is_null(v) ? std::nullopt : std::optional<double>(as_number(v));
}

void append_time(std::vector<SqlValue>& out, const std::optional<eval::TimeStats>& t) {
  if (!t) {
    out.insert(out.end(), 4, SqlValue());
    return;
  }
  out.insert(out.end(), {t->median_ms, t->p25_ms, t->p75_ms, std::int64_t{t->runs}});
}

std::optional<eval::TimeStats> time_at(const SqlRow& row, int first) {
  if (is_null(row[first])) return std::nullopt;
  eval::TimeStats t;
  t.median_ms = as_number(row[first]);
  t.p25_ms = as_number(row[first + 1]);
  t.p75_ms = as_number(row[first + 2]);
  t.runs = static_cast<int>(as_integer(row[first + 3]));
  return t;
}

// The 8 columns method .. wall_s; all NULL without provenance.
void append_provenance(std::vector<SqlValue>& out, const std::optional<eval::Provenance>& p) {
  if (!p) {
    out.insert(out.end(), 8, SqlValue());
    return;
  }
  out.insert(out.end(), {p->method, p->model, p->ledger.llm_calls, p->ledger.input_tokens, p->ledger.output_tokens,
                         p->ledger.cost_usd, p->ledger.evaluations, p->ledger.wall_s});
}

std::optional<eval::Provenance> provenance_at(const SqlRow& row, int first) {
  if (is_null(row[first])) return std::nullopt;
  eval::Provenance p;
  p.method = as_text(row[first]);
  p.model = as_text(row[first + 1]);
  p.ledger.llm_calls = as_integer(row[first + 2]);
  p.ledger.input_tokens = as_integer(row[first + 3]);
  p.ledger.output_tokens = as_integer(row[first + 4]);
  p.ledger.cost_usd = as_number(row[first + 5]);
  p.ledger.evaluations = as_integer(row[first + 6]);
  p.ledger.wall_s = as_number(row[first + 7]);
  return p;
}

// The values of kResultColumns for `r`.
std::vector<SqlValue> result_values(const eval::CandidateResult& r) {
  std::vector<SqlValue> v = {r.workload,
                             r.solution,
                             std::int64_t{r.sample},
                             r.task,
                             r.backend,
                             flag(r.compiled),
                             flag(r.correct),
                             r.error == eval::ErrorKind::None ? SqlValue() : SqlValue(std::string(eval::error_kind_name(r.error))),
                             r.message};
  append_time(v, r.time);
  append_time(v, r.baseline);
  v.push_back(optional_number(r.speedup));
  v.push_back(optional_number(r.max_abs_error));
  v.insert(v.end(), {r.cost.compile_s, r.cost.check_s, r.cost.time_s, flag(r.cost.compile_cached)});
  append_provenance(v, r.provenance);
  // An infinite ratio (a NaN or integer mismatch) is stored as NULL, as the JSON writes it.
  v.push_back(r.max_error_ratio && std::isfinite(*r.max_error_ratio) ? SqlValue(*r.max_error_ratio) : SqlValue());
  v.push_back(optional_number(r.speedup ? std::optional<double>(r.speedup_low) : std::nullopt));
  v.push_back(optional_number(r.speedup ? std::optional<double>(r.speedup_high) : std::nullopt));
  v.push_back(optional_number(r.cpu_steal >= 0 ? std::optional<double>(r.cpu_steal) : std::nullopt));
  v.push_back(r.baseline_info.is_native_default() ? SqlValue() : SqlValue(eval::to_json(r.baseline_info).dump()));
  v.push_back(r.cost.time_cpu_s);
  return v;
}

eval::CandidateResult result_from_row(const SqlRow& row) {
  eval::CandidateResult r;
  r.workload = as_text(row[0]);
  r.solution = as_text(row[1]);
  r.sample = static_cast<int>(as_integer(row[2]));
  r.task = as_text(row[3]);
  r.backend = as_text(row[4]);
  r.compiled = as_integer(row[5]) != 0;
  r.correct = as_integer(row[6]) != 0;
  // An error kind this ekb does not know (written by a newer one) reads as internal.
  if (!is_null(row[7])) r.error = eval::parse_error_kind(as_text(row[7])).value_or(eval::ErrorKind::Internal);
  r.message = as_text(row[8]);
  r.time = time_at(row, 9);
  r.baseline = time_at(row, 13);
  r.speedup = number_or_null(row[17]);
  r.max_abs_error = as_number(row[18]);  // NULL reads as NaN
  r.cost.compile_s = as_number(row[19]);
  r.cost.check_s = as_number(row[20]);
  r.cost.time_s = as_number(row[21]);
  r.cost.compile_cached = as_integer(row[22]) != 0;
  r.provenance = provenance_at(row, 23);
  r.max_error_ratio = number_or_null(row[31]);
  if (!is_null(row[32])) r.speedup_low = as_number(row[32]);
  if (!is_null(row[33])) r.speedup_high = as_number(row[33]);
  if (!is_null(row[34])) r.cpu_steal = as_number(row[34]);
  if (!is_null(row[35])) r.baseline_info = eval::baseline_info_from_json(nlohmann::json::parse(as_text(row[35])));
  if (!is_null(row[36])) r.cost.time_cpu_s = as_number(row[36]);
  return r;
}

RunInfo run_from_row(const SqlRow& row) {
  RunInfo r;
  r.id = as_text(row[0]);
  r.created = as_text(row[1]);
  r.backend = as_text(row[2]);
  r.device = nlohmann::json::parse(as_text(row[3]));
  r.options = nlohmann::json::parse(as_text(row[4]));
  r.solutions_dir = as_text(row[5]);
  r.selection = nlohmann::json::parse(as_text(row[6]));
  if (!is_null(row[7])) r.finished = as_text(row[7]);
  r.results = static_cast<int>(as_integer(row[8]));
  r.correct = static_cast<int>(as_integer(row[9]));
  return r;
}

// A URL's password replaced by "***": the location is printed in messages and listings.
std::string printable_location(const std::string& location) {
  if (!is_postgres_url(location)) return location;
  const size_t scheme_end = location.find("://") + 3;
  const size_t at = location.find('@', scheme_end);
  const size_t colon = location.find(':', scheme_end);
  if (at == std::string::npos || colon == std::string::npos || colon > at) return location;
  return location.substr(0, colon + 1) + "***" + location.substr(at);
}

}  // namespace

std::string default_db_path() {
  const char* env = std::getenv("EKB_DB");
  return env && *env ? env : "ekb-results.db";
}

bool is_postgres_url(std::string_view location) {
  return location.starts_with("postgresql://") || location.starts_with("postgres://");
}

std::vector<std::string> RunInfo::selected_workloads() const {
  std::vector<std::string> out;
  if (selection.is_object() && selection.contains("workloads") && selection["workloads"].is_array())
    for (const auto& w : selection["workloads"]) out.push_back(w.get<std::string>());
  return out;
}

struct ResultStore::Impl {
  std::string path;  // as printed: a URL's password hidden
  std::unique_ptr<StoreDatabase> db;
  std::string device;  // the device name of the run begun here: what add() records with each result
};

ResultStore::ResultStore(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
ResultStore::ResultStore(ResultStore&&) noexcept = default;
ResultStore& ResultStore::operator=(ResultStore&&) noexcept = default;
ResultStore::~ResultStore() = default;

const std::string& ResultStore::path() const { return impl_->path; }

ResultStore ResultStore::open(const std::string& location) {
  auto impl = std::make_unique<Impl>();
  impl->path = printable_location(location);
  impl->db = is_postgres_url(location) ? open_postgres_database(location, impl->path) : open_sqlite_database(location);
  return ResultStore(std::move(impl));
}

std::string ResultStore::begin_or_resume_run(const RunSpec& spec) {
  auto& db = *impl_->db;
  const std::string params = run_params(spec);
  impl_->device = spec.device.value("name", "");
  std::string id = spec.id;
  // One writer at a time: two processes starting the same run cannot both decide to create it.
  db.write_transaction([&] {
    if (!id.empty()) {
      auto rows = db.query("SELECT params FROM runs WHERE id = ?", {id});
      if (!rows.empty()) {
        if (as_text(rows[0][0]) != params)
          throw StoreError(fmt::format("run '{}' already exists with other parameters ({}); use another run id", id,
                                       as_text(rows[0][0])));
        return;
      }
    } else {
      auto rows = db.query(fmt::format("SELECT id FROM runs WHERE params = ? AND finished IS NULL "
                                       "ORDER BY created DESC, {} DESC LIMIT 1",
                                       db.run_insertion_order()),
                           {params});
      if (!rows.empty()) {
        id = as_text(rows[0][0]);
        return;
      }
      do {
        id = generated_run_id();
      } while (!db.query("SELECT 1 FROM runs WHERE id = ?", {id}).empty());
    }
    db.execute("INSERT INTO runs (id, created, backend, device, options, solutions_dir, selection, params) "
               "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
               {id, runtime::utc_timestamp_now(), spec.backend, spec.device.dump(), spec.options.dump(),
                spec.solutions_dir, spec.selection.dump(), params});
  });
  return id;
}

void ResultStore::finish_run(const std::string& run) {
  if (impl_->db->execute("UPDATE runs SET finished = ? WHERE id = ?", {runtime::utc_timestamp_now(), run}) == 0)
    throw StoreError(fmt::format("no run '{}' in {}", run, impl_->path));
}

void ResultStore::record_load(const std::string& run, double max_load_average, unsigned cores) {
  auto& db = *impl_->db;
  db.write_transaction([&] {
    auto rows = db.query("SELECT device FROM runs WHERE id = ?", {run});
    if (rows.empty()) throw StoreError(fmt::format("no run '{}' in {}", run, impl_->path));
    nlohmann::json device = nlohmann::json::parse(as_text(rows[0][0]), nullptr, false);
    if (!device.is_object()) device = nlohmann::json::object();
    // Of several shards, the busiest machine's: timings are as reliable as the least reliable.
    const double seen = device.contains("load") ? device["load"].value("max_1min_average", -1.0) : -1.0;
    device["load"] = {{"max_1min_average", std::max(seen, max_load_average)}, {"cores", cores}};
    db.execute("UPDATE runs SET device = ? WHERE id = ?", {device.dump(), run});
  });
}

std::optional<RunInfo> ResultStore::run(std::string_view id) const {
  auto rows = impl_->db->query(fmt::format("SELECT {} FROM runs r WHERE r.id = ?", kRunColumns), {std::string(id)});
  if (rows.empty()) return std::nullopt;
  return run_from_row(rows[0]);
}

std::vector<RunInfo> ResultStore::runs() const {
  std::vector<RunInfo> out;
  for (const auto& row : impl_->db->query(fmt::format("SELECT {} FROM runs r ORDER BY r.created DESC, r.{} DESC",
                                                      kRunColumns, impl_->db->run_insertion_order())))
    out.push_back(run_from_row(row));
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
  return !impl_->db
              ->query("SELECT 1 FROM results WHERE run_id = ? AND workload = ? AND solution = ? AND sample = ?",
                      {run, workload, solution, std::int64_t{sample}})
              .empty();
}

std::set<ResultKey> ResultStore::done(const std::string& run) const {
  std::set<ResultKey> out;
  for (const auto& row : impl_->db->query("SELECT workload, solution, sample FROM results WHERE run_id = ?", {run}))
    out.insert({as_text(row[0]), as_text(row[1]), static_cast<int>(as_integer(row[2]))});
  return out;
}

bool ResultStore::add(const std::string& run, const eval::CandidateResult& r) {
  static const std::string sql = [] {
    std::string placeholders;
    for (int i = 0; i < kResultColumnCount; ++i) placeholders += ", ?";
    // ON CONFLICT DO NOTHING: re-adding a (workload, solution, sample) cannot duplicate it, even
    // when two writers race to add it.
    return fmt::format("INSERT INTO results (run_id, stored, device, {}) VALUES (?, ?, ?{}) "
                       "ON CONFLICT (run_id, workload, solution, sample) DO NOTHING",
                       kResultColumns, placeholders);
  }();
  // A lost device says nothing about the candidate: it is evaluated again, never stored as failed.
  if (r.error == eval::ErrorKind::Device)
    throw StoreError("a device error is not a result (" + r.workload + " " + r.solution + ": " + r.message + ")");
  std::vector<SqlValue> values = {run, runtime::utc_timestamp_now(),
                                  impl_->device.empty() ? SqlValue() : SqlValue(impl_->device)};
  for (auto& v : result_values(r)) values.push_back(std::move(v));
  try {
    // One statement, one implicit transaction: the row is either fully committed or absent.
    return impl_->db->execute(sql, values) == 1;
  } catch (const StoreError& e) {
    if (!this->run(run)) throw StoreError(fmt::format("no run '{}' in {}", run, impl_->path));
    throw StoreError(fmt::format("storing {} {}#{}: {}", r.workload, r.solution, r.sample, e.what()));
  }
}

std::vector<eval::CandidateResult> ResultStore::results(const std::string& run) const {
  std::vector<eval::CandidateResult> out;
  for (const auto& row :
       impl_->db->query(fmt::format("SELECT {} FROM results WHERE run_id = ? ORDER BY seq", kResultColumns), {run}))
    out.push_back(result_from_row(row));
  return out;
}

std::map<ResultKey, std::string> ResultStore::devices(const std::string& run) const {
  std::map<ResultKey, std::string> out;
  for (const auto& row : impl_->db->query(
           "SELECT workload, solution, sample, device FROM results WHERE run_id = ? AND device IS NOT NULL", {run}))
    out[{as_text(row[0]), as_text(row[1]), static_cast<int>(as_integer(row[2]))}] = as_text(row[3]);
  return out;
}

void ResultStore::begin_shard(const std::string& run, eval::Shard shard, int planned, const std::string& host) {
  // A shard started again (after a crash, or on another node) replaces its earlier record.
  impl_->db->execute(
      "INSERT INTO shards (run_id, shard, shards, host, device, planned, started) VALUES (?, ?, ?, ?, ?, ?, ?) "
      "ON CONFLICT (run_id, shard, shards) DO UPDATE SET host = excluded.host, device = excluded.device, "
      "planned = excluded.planned, started = excluded.started, finished = NULL",
      {run, std::int64_t{shard.index}, std::int64_t{shard.count}, host, impl_->device, std::int64_t{planned},
       runtime::utc_timestamp_now()});
}

bool ResultStore::finish_shard(const std::string& run, eval::Shard shard) {
  auto& db = *impl_->db;
  bool all_finished = false;
  db.write_transaction([&] {
    db.execute("UPDATE shards SET finished = ? WHERE run_id = ? AND shard = ? AND shards = ?",
               {runtime::utc_timestamp_now(), run, std::int64_t{shard.index}, std::int64_t{shard.count}});
    auto rows = db.query("SELECT COUNT(*) FROM shards WHERE run_id = ? AND shards = ? AND finished IS NOT NULL",
                         {run, std::int64_t{shard.count}});
    all_finished = as_integer(rows[0][0]) == shard.count;
    if (all_finished) db.execute("UPDATE runs SET finished = ? WHERE id = ?", {runtime::utc_timestamp_now(), run});
  });
  return all_finished;
}

std::vector<ShardInfo> ResultStore::shards(const std::string& run) const {
  std::vector<ShardInfo> out;
  for (const auto& row : impl_->db->query("SELECT shard, shards, host, device, planned, started, finished FROM shards "
                                          "WHERE run_id = ? ORDER BY shards, shard",
                                          {run})) {
    ShardInfo s;
    s.shard = {static_cast<int>(as_integer(row[0])), static_cast<int>(as_integer(row[1]))};
    s.host = as_text(row[2]);
    s.device = as_text(row[3]);
    s.planned = static_cast<int>(as_integer(row[4]));
    s.started = as_text(row[5]);
    if (!is_null(row[6])) s.finished = as_text(row[6]);
    out.push_back(std::move(s));
  }
  return out;
}

void ResultStore::add_calibration(const runtime::Calibration& c) {
  impl_->db->execute("INSERT INTO calibrations (backend, device, created, bandwidth_gbs, peak_gflops, data) "
                     "VALUES (?, ?, ?, ?, ?, ?)",
                     {c.backend, c.device, c.created, c.bandwidth_gbs.best, c.peak_gflops.best, runtime::to_json(c).dump()});
}

std::optional<runtime::Calibration> ResultStore::calibration(const std::string& backend, const std::string& device) const {
  auto rows = impl_->db->query(
      "SELECT data FROM calibrations WHERE backend = ? AND device = ? ORDER BY created DESC, id DESC LIMIT 1",
      {backend, device});
  if (rows.empty()) return std::nullopt;
  return runtime::calibration_from_json(nlohmann::json::parse(as_text(rows[0][0])));
}

}  // namespace ekb::results
