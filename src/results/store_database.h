// The database under a ResultStore, one implementation per engine: SQLite (a file, the default)
// and PostgreSQL (a server that shards on many machines share, docs/SCALE_OUT.md). ResultStore
// writes its SQL once against this interface; each engine owns only its schema and how it runs a
// statement. Private to src/results.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace ekb::results {

// A column's value as both engines read and bind it: NULL, an integer, a double or text.
using SqlValue = std::variant<std::monostate, std::int64_t, double, std::string>;
using SqlRow = std::vector<SqlValue>;

class StoreDatabase {
 public:
  virtual ~StoreDatabase() = default;

  // Runs one statement with `?` placeholders bound to `params`, in its own transaction unless
  // inside write_transaction; returns its rows (none for a statement that returns none).
  virtual std::vector<SqlRow> query(std::string_view sql, const std::vector<SqlValue>& params = {}) = 0;
  // Runs one statement that changes rows; returns how many it changed.
  virtual long execute(std::string_view sql, const std::vector<SqlValue>& params = {}) = 0;
  // Runs `body` in one transaction that no other writer of the database interleaves with (two
  // processes deciding at once whether to create a run must not both create it). Commits when
  // `body` returns, rolls back when it throws.
  virtual void write_transaction(const std::function<void()>& body) = 0;
  // The column that orders rows of `runs` created in the same second (SQLite's rowid).
  virtual std::string_view run_insertion_order() const = 0;
};

// Each creates or migrates the schema (ResultStore's, version kStoreSchemaVersion) on open and
// throws StoreError for a database written by a newer schema or one it cannot open.
std::unique_ptr<StoreDatabase> open_sqlite_database(const std::string& path);
// `printable`: the URL with its password hidden, for messages.
std::unique_ptr<StoreDatabase> open_postgres_database(const std::string& url, const std::string& printable);

// 6: the shards of a run and the device of each result (docs/SCALE_OUT.md).
inline constexpr int kStoreSchemaVersion = 6;

}  // namespace ekb::results
