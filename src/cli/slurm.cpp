// ekb slurm submit --shards N [--partition P --gres G ...] -- <ekb command>: the command as an
// sbatch array job, one shard per array task (`--shard $SLURM_ARRAY_TASK_ID/N`), every shard
// writing to the command's --db. ekb slurm status NAME: each shard's state in Slurm and its
// progress in the store. Slurm's own commands (sbatch, scontrol, sacct) do the work; this writes
// the script and reads their answers (docs/SCALE_OUT.md).
#include <fmt/core.h>
#include <fmt/ranges.h>

#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <set>
#include <sstream>

#include "cli/commands.h"
#include "cli/results_db.h"
#include "runtime/calibration.h"
#include "runtime/paths.h"
#include "runtime/subprocess.h"

namespace ekb::cli {

namespace {

namespace fs = std::filesystem;

// The commands that take --shard.
const std::set<std::string> kShardable = {"eval", "generate", "agent", "experiment"};

struct SubmitOptions {
  int shards = 0;
  std::string partition;
  std::string gres;
  std::string time;
  int cpus_per_task = 0;
  std::string mem;
  std::string account;
  std::vector<std::string> sbatch_options;  // more `#SBATCH` lines, verbatim
  std::string dir = "ekb-slurm";
  std::string ekb;  // the ekb the nodes run; default: this one (a shared file system)
  bool no_submit = false;
  std::vector<std::string> command;  // after `--`
};

struct StatusOptions {
  std::string name;
  std::string dir = "ekb-slurm";
  bool json = false;
};

std::string shell_quoted(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// The value of `--NAME VALUE` or `--NAME=VALUE` in `args`, if given.
std::optional<std::string> option_value(const std::vector<std::string>& args, const std::string& name) {
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == name && i + 1 < args.size()) return args[i + 1];
    if (args[i].starts_with(name + "=")) return args[i].substr(name.size() + 1);
  }
  return std::nullopt;
}

std::string generated_name() {
  std::string stamp = runtime::utc_timestamp_now();  // 2024-05-01T12:34:56Z
  std::string digits;
  for (char c : stamp)
    if (std::isdigit(static_cast<unsigned char>(c))) digits += c;
  std::random_device rd;
  return fmt::format("slurm-{}-{}-{:04x}", digits.substr(0, 8), digits.substr(8), rd() & 0xffff);
}

std::string sbatch_script(const SubmitOptions& o, const std::string& name, const std::vector<std::string>& argv,
                          const fs::path& job_dir) {
  std::ostringstream s;
  s << "#!/bin/bash\n"
    << "# Written by `ekb slurm submit`: shard $SLURM_ARRAY_TASK_ID of " << o.shards << " (docs/SCALE_OUT.md).\n"
    << "#SBATCH --job-name=ekb-" << name << "\n"
    << "#SBATCH --array=0-" << o.shards - 1 << "\n"
    << "#SBATCH --output=" << (job_dir / "shard-%a.out").string() << "\n"
    << "#SBATCH --chdir=" << fs::current_path().string() << "\n";
  if (!o.partition.empty()) s << "#SBATCH --partition=" << o.partition << "\n";
  if (!o.gres.empty()) s << "#SBATCH --gres=" << o.gres << "\n";
  if (!o.time.empty()) s << "#SBATCH --time=" << o.time << "\n";
  if (o.cpus_per_task > 0) s << "#SBATCH --cpus-per-task=" << o.cpus_per_task << "\n";
  if (!o.mem.empty()) s << "#SBATCH --mem=" << o.mem << "\n";
  if (!o.account.empty()) s << "#SBATCH --account=" << o.account << "\n";
  for (const auto& extra : o.sbatch_options) s << "#SBATCH " << extra << "\n";
  s << "set -euo pipefail\nexec";
  for (const auto& a : argv) s << " " << shell_quoted(a);
  s << " --shard \"${SLURM_ARRAY_TASK_ID}/" << o.shards << "\"\n";
  return s.str();
}

void run_submit(SubmitOptions o) {
  if (o.command.empty()) throw UsageError("no command to shard\n  hint: ekb slurm submit --shards 4 -- eval -s native ...");
  // `-- ekb eval ...` and `-- eval ...` both name this ekb's subcommand.
  if (o.command.front() == "ekb" || o.command.front().ends_with("/ekb")) o.command.erase(o.command.begin());
  if (o.command.empty() || !kShardable.count(o.command.front()))
    throw UsageError(fmt::format("ekb slurm runs one of {} in shards, not '{}'", fmt::join(kShardable, ", "),
                                 o.command.empty() ? "" : o.command.front()));
  if (option_value(o.command, "--shard")) throw UsageError("the command's --shard is the array task's: leave it out");
  const std::string subcommand = o.command.front();

  // Every shard must join the same run: an eval gets its --run here unless it names one.
  std::string name;
  std::vector<std::string> argv = {o.ekb.empty() ? fs::read_symlink("/proc/self/exe").string() : o.ekb};
  argv.insert(argv.end(), o.command.begin(), o.command.end());
  if (subcommand == "eval") {
    if (auto run = option_value(o.command, "--run")) name = *run;
    else argv.insert(argv.end(), {"--run", name = generated_name()});
  } else {
    name = generated_name();
  }
  std::string db = option_value(o.command, "--db").value_or(results::default_db_path());
  if ((subcommand == "eval" || subcommand == "experiment") && !results::is_postgres_url(db))
    fmt::print(stderr, "note: the shards share {}, a SQLite file: that needs a file system with working locks "
                       "on every node; a PostgreSQL --db (postgresql://...) is the shared store (docs/SCALE_OUT.md)\n",
               db);
  if ((subcommand == "eval") && !results::is_postgres_url(db) && !option_value(o.command, "--db"))
    argv.insert(argv.end(), {"--db", db = fs::absolute(db).string()});  // the nodes' working directory may differ

  const fs::path job_dir = fs::absolute(fs::path(o.dir) / name);
  runtime::make_directories(job_dir.string());
  const fs::path script = job_dir / "job.sbatch";
  runtime::write_file_atomically(script.string(), sbatch_script(o, name, argv, job_dir));
  nlohmann::json record = {{"name", name},
                           {"shards", o.shards},
                           {"command", argv},
                           {"subcommand", subcommand},
                           {"db", db},
                           {"script", script.string()},
                           {"submitted", runtime::utc_timestamp_now()}};
  if (subcommand == "eval") record["run"] = name;
  if (o.no_submit) {
    runtime::write_file_atomically((job_dir / "job.json").string(), record.dump(2) + "\n");
    fmt::print("wrote {} (not submitted: `sbatch {}` submits it)\n", script.string(), script.string());
    return;
  }
  runtime::CommandOptions run_options;
  run_options.timeout_s = 300;
  const runtime::CommandResult r = runtime::run_command({"sbatch", "--parsable", script.string()}, run_options);
  if (!r.ok())
    throw std::runtime_error(fmt::format("sbatch {} failed (exit {}): {}", script.string(), r.exit_code, r.output));
  // --parsable: "JOBID" or "JOBID;CLUSTER".
  const std::string job_id = r.output.substr(0, r.output.find_first_of(";\n"));
  record["job_id"] = job_id;
  runtime::write_file_atomically((job_dir / "job.json").string(), record.dump(2) + "\n");
  fmt::print("submitted job {}: {} shards of `ekb {}`{}\n  script {}\n  `ekb slurm status {}` shows its progress\n",
             job_id, o.shards, subcommand, subcommand == "eval" ? ", run " + name : "", script.string(), name);
}

struct TaskState {
  std::string state = "unknown";  // Slurm's job state; "unknown" when Slurm no longer knows the task
  std::string node;
};

// "3", "0-3", "0-3%2", "1,4-5": the array task ids a pending record stands for.
std::vector<int> array_task_ids(const std::string& text) {
  std::vector<int> ids;
  std::string list = text.substr(0, text.find('%'));
  std::stringstream ss(list);
  std::string part;
  while (std::getline(ss, part, ',')) {
    const size_t dash = part.find('-');
    try {
      const int first = std::stoi(part.substr(0, dash));
      const int last = dash == std::string::npos ? first : std::stoi(part.substr(dash + 1));
      for (int i = first; i <= last; ++i) ids.push_back(i);
    } catch (const std::exception&) {
    }
  }
  return ids;
}

// Each array task's state: from `scontrol show job` while Slurm remembers the job, else from
// sacct where accounting is kept.
std::map<int, TaskState> task_states(const std::string& job_id) {
  std::map<int, TaskState> states;
  runtime::CommandOptions options;
  options.timeout_s = 60;
  const runtime::CommandResult shown = runtime::run_command({"scontrol", "-o", "show", "job", job_id}, options);
  if (shown.ok()) {
    std::stringstream lines(shown.output);
    std::string line;
    while (std::getline(lines, line)) {
      std::map<std::string, std::string> fields;
      std::stringstream words(line);
      std::string word;
      while (words >> word)
        if (const size_t eq = word.find('='); eq != std::string::npos) fields[word.substr(0, eq)] = word.substr(eq + 1);
      const std::string node = fields["NodeList"] == "(null)" ? "" : fields["NodeList"];
      for (int id : array_task_ids(fields["ArrayTaskId"])) states[id] = {fields["JobState"], node};
    }
    return states;
  }
  const runtime::CommandResult accounted =
      runtime::run_command({"sacct", "-n", "-P", "-X", "-j", job_id, "-o", "JobID,State,NodeList"}, options);
  if (accounted.ok()) {
    std::stringstream lines(accounted.output);
    std::string line;
    while (std::getline(lines, line)) {
      std::vector<std::string> cols;
      std::stringstream fields(line);
      std::string f;
      while (std::getline(fields, f, '|')) cols.push_back(f);
      if (cols.size() < 3) continue;
      const size_t underscore = cols[0].find('_');
      if (underscore == std::string::npos) continue;
      for (int id : array_task_ids(cols[0].substr(underscore + 1))) states[id] = {cols[1], cols[2]};
    }
  }
  return states;
}

void run_status(const StatusOptions& o) {
  const fs::path record_path = fs::path(o.dir) / o.name / "job.json";
  std::ifstream in(record_path);
  if (!in)
    throw UsageError(fmt::format("no job '{}' in {} (no {})\n  hint: --dir names the folder `ekb slurm submit` wrote",
                                 o.name, o.dir, record_path.string()));
  const nlohmann::json record = nlohmann::json::parse(in);
  const int shards = record.at("shards").get<int>();
  const std::string job_id = record.value("job_id", "");
  const std::map<int, TaskState> states = job_id.empty() ? std::map<int, TaskState>{} : task_states(job_id);

  // Progress in the store, for an evaluation: results stored per shard against what it owns.
  std::map<int, results::ShardInfo> recorded;
  std::vector<int> stored(shards, 0);
  std::optional<results::RunInfo> run;
  if (record.contains("run")) {
    const std::string db = record.at("db").get<std::string>();
    if (results::is_postgres_url(db) || fs::exists(db)) {
      results::ResultStore store = results::ResultStore::open(db);
      run = store.run(record.at("run").get<std::string>());
      if (run) {
        for (const auto& s : store.shards(run->id))
          if (s.shard.count == shards) recorded[s.shard.index] = s;
        for (const auto& k : store.done(run->id)) ++stored[eval::shard_owner(k.workload, k.sample, shards)];
      }
    }
  }

  nlohmann::json out = {{"name", o.name}, {"job_id", job_id}, {"shards", nlohmann::json::array()}};
  if (run) out["run"] = {{"id", run->id}, {"results", run->results}, {"finished", run->finished.has_value()}};
  int finished = 0;
  for (int i = 0; i < shards; ++i) {
    const auto state = states.find(i);
    const auto shard = recorded.find(i);
    nlohmann::json row = {{"shard", i},
                          {"state", state != states.end() ? state->second.state : "unknown"},
                          {"node", state != states.end() ? state->second.node : ""},
                          {"stored", stored[i]}};
    if (shard != recorded.end()) {
      row["planned"] = shard->second.planned;
      row["host"] = shard->second.host;
      row["finished"] = shard->second.finished.has_value();
      finished += shard->second.finished ? 1 : 0;
    }
    out["shards"].push_back(row);
  }
  if (o.json) {
    fmt::print("{}\n", out.dump(2));
    return;
  }
  fmt::print("job {} ({}): {} shards of `ekb {}`\n", job_id.empty() ? "(not submitted)" : job_id, o.name, shards,
             record.value("subcommand", "?"));
  fmt::print("  {:<6} {:<12} {:<16} {:>15}  {}\n", "SHARD", "STATE", "NODE", "STORED/PLANNED", "SHARD RECORD");
  for (const auto& row : out["shards"]) {
    const std::string planned = row.contains("planned") ? std::to_string(row["planned"].get<int>()) : "?";
    const std::string stage = !row.contains("planned") ? "not started" : row["finished"].get<bool>() ? "finished" : "running";
    fmt::print("  {:<6} {:<12} {:<16} {:>15}  {}\n", row["shard"].get<int>(), row["state"].get<std::string>(),
               row["node"].get<std::string>(), fmt::format("{}/{}", row["stored"].get<int>(), planned),
               record.contains("run") ? stage : "");
  }
  if (run)
    fmt::print("run {}: {} results stored, {} of {} shards finished{}\n", run->id, run->results, finished, shards,
               run->finished ? "; the run is finished (`ekb report " + run->id + "`)" : "");
}

}  // namespace

void add_slurm_command(CLI::App& app, Context& ctx) {
  CLI::App* slurm = app.add_subcommand("slurm", "Run a command in shards as a Slurm array job (docs/SCALE_OUT.md)");
  slurm->require_subcommand(1);

  auto submit = std::make_shared<SubmitOptions>();
  CLI::App* cmd = slurm->add_subcommand(
      "submit", "Write and submit an sbatch array job: one shard of the command (eval, generate, agent, experiment) per "
                "array task, all writing to its --db");
  cmd->add_option("--shards", submit->shards, "N: the array's tasks, each `--shard I/N`")
      ->required()
      ->check(CLI::Range(1, 100000));
  cmd->add_option("--partition", submit->partition, "sbatch --partition");
  cmd->add_option("--gres", submit->gres, "sbatch --gres, e.g. gpu:1");
  cmd->add_option("--time", submit->time, "sbatch --time, e.g. 04:00:00");
  cmd->add_option("--cpus-per-task", submit->cpus_per_task, "sbatch --cpus-per-task");
  cmd->add_option("--mem", submit->mem, "sbatch --mem, e.g. 8G");
  cmd->add_option("--account", submit->account, "sbatch --account");
  cmd->add_option("--sbatch-option", submit->sbatch_options, "Another #SBATCH line, verbatim (repeatable)");
  cmd->add_option("--dir", submit->dir, "Where the job's script, record and shard logs go")->capture_default_str();
  cmd->add_option("--ekb", submit->ekb, "The ekb the nodes run (default: this one; a path they share)");
  cmd->add_flag("--no-submit", submit->no_submit, "Write the script and the record, submit nothing");
  cmd->add_option("command", submit->command, "After --: the ekb command to shard")->required();
  cmd->callback([submit] { run_submit(*submit); });

  auto status = std::make_shared<StatusOptions>();
  CLI::App* st = slurm->add_subcommand("status", "Each shard's state in Slurm and its results in the store");
  st->add_option("name", status->name, "The job's name: the run id `ekb slurm submit` printed")->required();
  st->add_option("--dir", status->dir, "Where `ekb slurm submit` wrote the job")->capture_default_str();
  st->add_flag("--json", status->json, "Print JSON");
  st->callback([status] { run_status(*status); });
}

}  // namespace ekb::cli
