// ekb runs: the runs stored in a results database, newest first.
#include <fmt/core.h>

#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/results_db.h"

namespace ekb::cli {

namespace {

struct RunsOptions {
  std::string db;
  bool json = false;
};

void run_runs(const RunsOptions& o) {
  results::ResultStore store = open_existing_store(o.db);
  std::vector<results::RunInfo> runs = store.runs();
  if (o.json) {
    nlohmann::json arr = nlohmann::json::array();
    for (const auto& r : runs)
      arr.push_back({{"id", r.id},
                     {"created", r.created},
                     {"finished", r.finished ? nlohmann::json(*r.finished) : nlohmann::json(nullptr)},
                     {"backend", r.backend},
                     {"device", r.device},
                     {"solutions_dir", r.solutions_dir},
                     {"workloads", r.selected_workloads().size()},
                     {"results", r.results},
                     {"correct", r.correct}});
    fmt::print("{}\n", arr.dump(2));
    return;
  }
  fmt::print("{:<22} {:<20} {:<7} {:<28} {:>9} {:>7} {:<10} {}\n", "RUN", "CREATED", "BACKEND", "DEVICE", "RESULTS",
             "CORRECT", "STATE", "SOLUTIONS");
  for (const auto& r : runs) {
    std::string device = r.device_name();
    if (device.size() > 28) device = device.substr(0, 25) + "...";
    fmt::print("{:<22} {:<20} {:<7} {:<28} {:>9} {:>7} {:<10} {}\n", r.id, r.created, r.backend, device, r.results,
               r.correct, r.finished ? "finished" : "unfinished", r.solutions_dir);
  }
  fmt::print("{} runs in {}\n", runs.size(), store.path());
}

}  // namespace

void add_runs_command(CLI::App& app, Context& ctx) {
  auto o = std::make_shared<RunsOptions>();
  CLI::App* cmd = app.add_subcommand("runs", "List the runs stored in the results database");
  add_db_option(cmd, o->db);
  cmd->add_flag("--json", o->json, "Print a JSON array");
  cmd->callback([o] { run_runs(*o); });
}

}  // namespace ekb::cli
