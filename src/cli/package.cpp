// ekb package --solutions DIR --out PKG [--target TRIPLE] [--example WORKLOAD] [--time] [SELECTION]:
// verified solutions built into a C library for a target (package/package.h, docs/DEVICES.md).
#include <fmt/core.h>

#include "cli/commands.h"
#include "package/package.h"

namespace ekb::cli {

namespace {

struct PackageCliOptions {
  package::PackageOptions package;
  suite::Selection selection;
};

void run_package(Context& ctx, const PackageCliOptions& o) {
  const std::vector<suite::WorkloadEntry> selected = selected_workloads(ctx, o.selection);
  package::PackageResult r;
  try {
    r = package::build_package(selected, o.package, [](const std::string& line) { fmt::print("{}\n", line); });
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
  const int packaged = r.packaged();
  fmt::print("\n{} of {} workloads with solutions packaged", packaged, r.kernels.size());
  if (packaged == 0) {
    fmt::print(": nothing to package\n");
    g_exit_code = 1;
    return;
  }
  fmt::print(" into {} (include/ekb_kernels.h, lib/libekb_kernels.a, manifest.json)\n", o.package.out_dir);
  if (r.example_ran) {
    fmt::print("example ({}): {}", r.example_workload, r.example_output);
    if (!r.example_passed) g_exit_code = 1;
  } else if (o.package.run_example) {
    fmt::print("example ({}): could not run: {}\n", r.example_workload, r.example_output);
    g_exit_code = 1;
  }
  if (packaged < static_cast<int>(r.kernels.size())) g_exit_code = 1;
}

}  // namespace

void add_package_command(CLI::App& app, Context& ctx) {
  CLI::App* cmd = app.add_subcommand(
      "package", "Build verified cpu solutions into a C library for a target: header, static library, manifest, example");
  auto o = std::make_shared<PackageCliOptions>();
  cmd->add_option("--solutions,-s", o->package.solutions_dir, "The solutions directory (docs/SOLUTIONS.md)")
      ->required()
      ->check(CLI::ExistingDirectory);
  cmd->add_option("--out,-o", o->package.out_dir, "The package directory (replaced where it exists)")->required();
  cmd->add_option("--target", o->package.target,
                  "A cpu target triple (aarch64-linux-gnu, riscv64-linux-gnu; default: this machine); a cross target's "
                  "solutions are verified and the example run under qemu-user");
  cmd->add_option("--example", o->package.example_workload, "The example program's workload (default: the first packaged)");
  cmd->add_flag("--time", o->package.time, "Also time each solution against the native default (this machine only)");
  cmd->add_flag("!--no-run", o->package.run_example, "Build the example program but do not run it");
  cmd->add_option("names", o->selection.names, "Globs over PATTERN/WORKLOAD or pattern names (default: all)");
  add_selection_filters(cmd, o->selection);
  cmd->callback([&ctx, o] { run_package(ctx, *o); });
}

}  // namespace ekb::cli
