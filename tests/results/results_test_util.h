// Building blocks for the results tests: fresh database paths and CandidateResults.
#pragma once
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "eval/result.h"
#include "postgres_server.h"
#include "results/result_store.h"

namespace ekb::results::testing_util {

// A path for a new file no other test uses; its directory exists, the file does not. The
// directories are removed when the test process exits normally.
inline std::string fresh_db_path(const std::string& name) {
  struct Dirs {
    std::vector<std::filesystem::path> made;
    ~Dirs() {
      std::error_code ignored;
      for (const auto& d : made) std::filesystem::remove_all(d, ignored);
    }
  };
  static Dirs dirs;
  std::filesystem::path dir = std::filesystem::path(::testing::TempDir()) /
                              ("ekb_results_" + std::to_string(getpid()) + "_" + std::to_string(dirs.made.size()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  dirs.made.push_back(dir);
  return (dir / name).string();
}

// The PostgreSQL server of this test process, started on first use and stopped at its exit; null,
// with the reason in *why, where none can run here.
inline ekb::testing::PostgresServer* shared_postgres(std::string* why) {
  static std::string failure;
  static std::unique_ptr<ekb::testing::PostgresServer> server = [] {
    auto s = std::make_unique<ekb::testing::PostgresServer>();
    if (!s->start(&failure)) s.reset();
    return s;
  }();
  *why = failure;
  return server.get();
}

// A new store of `engine` ("sqlite" or "postgres") no other test uses: a fresh file, or a fresh
// database on shared_postgres(). Empty when the engine cannot run here.
inline std::string fresh_store_location(const std::string& engine, const std::string& name) {
  if (engine == "sqlite") return fresh_db_path(name + ".db");
  static int databases = 0;
  std::string why;
  ekb::testing::PostgresServer* server = shared_postgres(&why);
  return server ? server->create_database("ekb_" + name + "_" + std::to_string(databases++)) : "";
}

inline eval::CandidateResult make_result(const std::string& workload, int sample, bool correct,
                                         std::optional<double> speedup = std::nullopt,
                                         const std::string& solution = "solutions/k.c") {
  eval::CandidateResult r;
  r.workload = workload;
  r.task = workload.substr(0, workload.find('/'));
  r.backend = "cpu";
  r.solution = solution;
  r.sample = sample;
  r.compiled = true;
  r.correct = correct;
  if (correct && speedup) {
    double baseline = 2.0;
    r.baseline = eval::TimeStats{baseline, baseline * 0.9, baseline * 1.1, 21};
    r.time = eval::TimeStats{baseline / *speedup, baseline / *speedup * 0.95, baseline / *speedup * 1.05, 33};
    r.speedup = speedup;
  }
  if (!correct) {
    r.error = eval::ErrorKind::Mismatch;
    r.message = "output Y[3, 7]: got 1.5, expected 1.25 (tolerance 1e-3)";
  }
  r.max_abs_error = correct ? 1e-6 : 0.25;
  r.cost = {1.5, 0.25, 2.0, false};
  return r;
}

inline RunSpec make_spec(const std::vector<std::string>& workloads, const std::string& device = "Test CPU") {
  RunSpec s;
  s.backend = "cpu";
  s.device = {{"backend", "cpu"}, {"name", device}, {"compiler", "clang 16"}};
  s.options = {{"trials", 3}, {"min_time_s", 0.2}};
  s.solutions_dir = "solutions";
  s.selection = {{"domains", {"nn"}}, {"workloads", workloads}};
  return s;
}

}  // namespace ekb::results::testing_util
