// ekb: the EdgeKernelBench command line.
#include <charconv>
#include <cstdio>
#include <exception>

#include <unistd.h>

#include "cli/commands.h"
#include "runtime/cpu_target.h"
#include "runtime/opencl_program.h"

namespace ekb::cli {

int g_exit_code = 0;

const suite::Suite& Context::suite() {
  if (!suite_) suite_ = std::make_unique<suite::Suite>(suite::Suite::load(suite_dir));
  return *suite_;
}

suite::WorkloadEntry Context::workload(const std::string& full_name) {
  auto w = suite().find_workload(full_name);
  if (!w) throw UsageError(suite().unknown_workload_message(full_name));
  return *w;
}

CLI::Option* add_target_option(CLI::App* cmd, const std::string& flags, ir::Target& target,
                               const std::string& description) {
  return cmd
      ->add_option_function<std::string>(
          flags, [&target](const std::string& name) { target = ir::target_from_name(name); }, description)
      ->check(CLI::IsMember(ir::target_names()))
      ->default_str(std::string(ir::target_name(target)));
}

void add_device_index_or_name_option(CLI::App* cmd, std::function<void(int)> set_index, std::string& name,
                                     const std::string& help) {
  cmd->add_option_function<std::string>(
      "--device",
      [set_index = std::move(set_index), &name](const std::string& v) {
        int index = 0;
        const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), index);
        if (ec == std::errc() && end == v.data() + v.size()) set_index(index);
        else name = v;
      },
      help);
}

void add_shard_option(CLI::App* cmd, eval::Shard& shard) {
  cmd->add_option_function<std::string>(
         "--shard",
         [&shard](const std::string& text) {
           try {
             shard = eval::parse_shard(text);
           } catch (const std::invalid_argument& e) {
             throw CLI::ValidationError("--shard", e.what());
           }
         },
         "Evaluate only shard I of N (0 <= I < N) of the selected work, split by workload and sample; the N "
         "shards may run anywhere at once into one --db (docs/SCALE_OUT.md)")
      ->type_name("I/N");
}

std::string host_name() {
  char name[256] = {};
  if (gethostname(name, sizeof name - 1) != 0) return "?";
  return name;
}

void add_opencl_options(CLI::App* cmd, runtime::BackendOptions& options, std::string* device_name) {
  cmd->add_option("--platform", options.platform,
                  "opencl: the platform whose name or version contains this (case-insensitive: pocl, nvidia; default: the first "
                  "with a device)");
  if (device_name) {
    add_device_index_or_name_option(cmd, [&options](int index) { options.device = index; }, *device_name,
                                    "opencl: the device index within the platform (default 0); a name: the remote device "
                                    "of that name in the devices file (--devices; docs/DEVICES.md)");
  } else {
    cmd->add_option("--device", options.device, "opencl: the device index within the platform (default 0)");
  }
  cmd->add_option("--build-options", options.build_options,
                  "opencl: the options of clBuildProgram, instead of the default '" +
                      runtime::opencl::default_build_options() + "' (they are part of the device's compiler string in the results)");
}

void add_cpu_target_option(CLI::App* cmd, runtime::BackendOptions& options) {
  std::string known;
  for (const std::string& t : runtime::cross_cpu_targets()) known += ", " + t;
  cmd->add_option("--target", options.cpu_target,
                  "cpu: compile for this target triple (host" + known +
                      "); a cross target's kernels run under qemu-user, checked but never timed (docs/DEVICES.md)");
}

std::unique_ptr<runtime::Backend> make_cli_backend(ir::Target target, const runtime::BackendOptions& options) {
  if ((options.platform || options.device || options.build_options) && target != ir::Target::OpenCL)
    throw UsageError("--platform, --device and --build-options are the opencl backend's\n  hint: --backend opencl");
  if (options.cpu_target && target != ir::Target::Cpu)
    throw UsageError("--target is the cpu backend's\n  hint: --backend cpu");
  try {
    return runtime::make_backend(target, options);
  } catch (const std::runtime_error& e) {
    throw UsageError(e.what());
  }
}

}  // namespace ekb::cli

int main(int argc, char** argv) {
  using namespace ekb::cli;
  CLI::App app{"EdgeKernelBench: are generated kernels correct and fast on edge backends?", "ekb"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("ekb 0.1"));
  Context ctx;
  app.add_option("--suite", ctx.suite_dir,
                 "Load the suite from this directory instead of the copy built into ekb "
                 "(default: $EKB_SUITE)")
      ->check(CLI::ExistingDirectory);
  add_list_command(app, ctx);
  add_show_command(app, ctx);
  add_validate_command(app, ctx);
  add_prompt_command(app, ctx);
  add_eval_command(app, ctx);
  add_emit_command(app, ctx);
  add_directives_command(app, ctx);
  add_worker_command(app, ctx);
  add_opencl_compile_command(app, ctx);
  add_report_command(app, ctx);
  add_runs_command(app, ctx);
  add_calibrate_command(app, ctx);
  add_suite_command(app, ctx);
  add_generate_command(app, ctx);
  add_workspace_command(app, ctx);
  add_tvm_tune_command(app, ctx);
  add_agent_command(app, ctx);
  add_experiment_command(app, ctx);
  add_trajectory_command(app, ctx);
  add_package_command(app, ctx);
  add_slurm_command(app, ctx);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  } catch (const UsageError& e) {
    std::fprintf(stderr, "ekb: error: %s\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ekb: error: %s\n", e.what());
    return 1;
  }
  return g_exit_code;
}
