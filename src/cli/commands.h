// The `ekb` subcommands. Each add_*_command registers its options and its callback on the app.
#pragma once
#include <CLI/CLI.hpp>
#include <functional>
#include <memory>
#include <string>

#include "eval/shard.h"
#include "ir/target.h"
#include "runtime/backend.h"
#include "suite/selection.h"
#include "suite/suite.h"

namespace ekb::cli {

// State shared by the subcommands: global options and the suite, loaded on first use.
class Context {
 public:
  std::string suite_dir = suite::Suite::default_dir();
  const suite::Suite& suite();
  // The workload named `full_name`, or a thrown UsageError with the nearest name as a hint.
  suite::WorkloadEntry workload(const std::string& full_name);

 private:
  std::unique_ptr<suite::Suite> suite_;
};

// A mistake in what the user asked for (unknown name, bad option value): exit code 2.
class UsageError : public std::runtime_error {
  using std::runtime_error::runtime_error;
};

// The filters every command that takes a selection shares: --domain, --level, --dtype, --size.
void add_selection_filters(CLI::App* cmd, suite::Selection& selection);

// The workloads `selection` names, a bad filter value a UsageError; with `require_some`, so is a
// selection that matches nothing.
std::vector<suite::WorkloadEntry> selected_workloads(Context& ctx, const suite::Selection& selection,
                                                     bool require_some = true);

// --shard I/N (eval/shard.h, docs/SCALE_OUT.md): this process does part I of N of the selected work.
void add_shard_option(CLI::App* cmd, eval::Shard& shard);
// This machine's name, recorded with each shard.
std::string host_name();

// An option naming a target (cpu, cuda, opencl), parsed into `target`, which holds the default.
CLI::Option* add_target_option(CLI::App* cmd, const std::string& flags, ir::Target& target,
                               const std::string& description);

// The opencl backend's --platform, --device and --build-options (ekb eval, ekb agent).
// With `device_name`, --device also takes a remote device's name (cli/devices.h), stored there;
// an integer keeps its opencl meaning.
void add_opencl_options(CLI::App* cmd, runtime::BackendOptions& options, std::string* device_name = nullptr);
// --device: an integer is a GPU's index, given to `set_index`; anything else a remote device's name
// (cli/devices.h), stored in `name`.
void add_device_index_or_name_option(CLI::App* cmd, std::function<void(int)> set_index, std::string& name,
                                     const std::string& help);
// --target TRIPLE: the cpu backend's cross target (runtime/cpu_target.h).
void add_cpu_target_option(CLI::App* cmd, runtime::BackendOptions& options);

// The backend of `target` with those options; a UsageError says why it cannot run here, or that
// they were given for another backend.
std::unique_ptr<runtime::Backend> make_cli_backend(ir::Target target, const runtime::BackendOptions& options);

void add_list_command(CLI::App& app, Context& ctx);
void add_show_command(CLI::App& app, Context& ctx);
void add_validate_command(CLI::App& app, Context& ctx);
void add_prompt_command(CLI::App& app, Context& ctx);
void add_eval_command(CLI::App& app, Context& ctx);
void add_emit_command(CLI::App& app, Context& ctx);
void add_directives_command(CLI::App& app, Context& ctx);
void add_worker_command(CLI::App& app, Context& ctx);  // hidden: the sandboxed kernel runner
void add_opencl_compile_command(CLI::App& app, Context& ctx);  // hidden: the opencl backend's compile step
void add_report_command(CLI::App& app, Context& ctx);
void add_runs_command(CLI::App& app, Context& ctx);
void add_calibrate_command(CLI::App& app, Context& ctx);
void add_suite_command(CLI::App& app, Context& ctx);  // suite stats
void add_generate_command(CLI::App& app, Context& ctx);
void add_workspace_command(CLI::App& app, Context& ctx);  // create | check (hidden) | collect
void add_tvm_tune_command(CLI::App& app, Context& ctx);   // candidates | select (GPU tuning)
void add_agent_command(CLI::App& app, Context& ctx);      // LEKA
void add_trajectory_command(CLI::App& app, Context& ctx); // show
void add_experiment_command(CLI::App& app, Context& ctx); // every method at one budget, judged alike
void add_package_command(CLI::App& app, Context& ctx);    // verified solutions as a C library
void add_slurm_command(CLI::App& app, Context& ctx);      // submit | status: shards as a Slurm array job

// Set by a command whose work found problems (e.g. validate): the process exit code.
extern int g_exit_code;

}  // namespace ekb::cli
