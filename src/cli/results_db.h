// The --db option shared by the commands that read or write the results database.
#pragma once
#include <CLI/CLI.hpp>
#include <filesystem>
#include <string>

#include "cli/commands.h"
#include "results/result_store.h"

namespace ekb::cli {

inline CLI::Option* add_db_option(CLI::App* cmd, std::string& path) {
  path = results::default_db_path();
  return cmd->add_option("--db", path,
                         "The results database: a SQLite file, or postgresql://... for a store that shards share "
                         "(default: $EKB_DB, else ./ekb-results.db)")
      ->capture_default_str();
}

// Opens a database that must already exist: reading commands should not leave an empty file
// behind a mistyped path.
inline results::ResultStore open_existing_store(const std::string& path) {
  if (!results::is_postgres_url(path) && !std::filesystem::exists(path))
    throw UsageError("no results database at '" + path + "'\n  hint: pass --db PATH or set $EKB_DB");
  try {
    return results::ResultStore::open(path);
  } catch (const results::StoreError& e) {
    throw UsageError(e.what());
  }
}

}  // namespace ekb::cli
