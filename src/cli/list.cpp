// ekb list: the suite's workloads, filtered; a table or JSON.
#include <fmt/core.h>

#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/workload_json.h"
#include "suite/selection.h"

namespace ekb::cli {

namespace {

struct ListOptions {
  suite::Selection selection;
  bool json = false;
  bool exclude_heldout = false;
};

void run_list(Context& ctx, ListOptions& o) {
  o.selection.include_heldout = !o.exclude_heldout;
  auto selected = selected_workloads(ctx, o.selection, false);
  if (o.json) {
    nlohmann::json arr = nlohmann::json::array();
    for (const auto& w : selected) arr.push_back(workload_json(w));
    fmt::print("{}\n", arr.dump(2));
    return;
  }
  fmt::print("{:<52} {:<8} {:<5} {:<6} {:>12} {:>11}\n", "WORKLOAD", "LEVEL", "DTYPE", "SIZE",
             "MFLOP|MOP", "KIB MOVED");
  for (const auto& w : selected) {
    nlohmann::json j = workload_json(w);
    std::string ops = j["flops"].is_null() ? "invalid"
                                           : fmt::format("{:.3f}", (j["flops"].get<double>() +
                                                                    j["int_ops"].get<double>()) / 1e6);
    std::string kib = j["min_bytes"].is_null() ? "-" : fmt::format("{:.1f}", j["min_bytes"].get<double>() / 1024);
    std::string name = w.full_name() + (w.workload->has_tag("heldout") ? " *" : "");
    fmt::print("{:<52} {:<8} {:<5} {:<6} {:>12} {:>11}\n", name, j["level"].get<std::string>(),
               j["dtype"].get<std::string>(), j["size"].get<std::string>(), ops, kib);
  }
  size_t patterns = 0;
  std::string last;
  for (const auto& w : selected)
    if (w.pattern->name() != last) ++patterns, last = w.pattern->name();
  fmt::print("{} workloads of {} patterns ({} marks a held-out shape)\n", selected.size(), patterns, "*");
}

}  // namespace

std::vector<suite::WorkloadEntry> selected_workloads(Context& ctx, const suite::Selection& selection,
                                                     bool require_some) {
  try {
    selection.check_values();
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
  std::vector<suite::WorkloadEntry> selected = selection.apply(ctx.suite());
  if (require_some && selected.empty())
    throw UsageError("the selection matches no workload\n  hint: `ekb list` with the same filters");
  return selected;
}

void add_selection_filters(CLI::App* cmd, suite::Selection& selection) {
  cmd->add_option("--domain", selection.domains, "Only these domains (nn, qnn, img, audio, linalg, robotics, transformer, graph)")
      ->delimiter(',');
  cmd->add_option("--level", selection.levels, "Only these levels (operator, fused, graph)")->delimiter(',');
  cmd->add_option("--dtype", selection.dtypes, "Only workloads whose first input has this type (f32, f16, i8, u8, ...)")
      ->delimiter(',');
  cmd->add_option("--size", selection.sizes, "Only these size classes (micro, mobile)")->delimiter(',');
}

void add_list_command(CLI::App& app, Context& ctx) {
  auto o = std::make_shared<ListOptions>();
  CLI::App* cmd = app.add_subcommand("list", "List the suite's workloads, filtered");
  cmd->add_option("names", o->selection.names,
                  "Globs over PATTERN/WORKLOAD or pattern names, e.g. 'nn.*' or '*/kws_*'");
  add_selection_filters(cmd, o->selection);
  cmd->add_flag("--no-heldout", o->exclude_heldout, "Leave out held-out workloads");
  cmd->add_flag("--json", o->json, "Print a JSON array with each workload's facts");
  cmd->callback([&ctx, o] { run_list(ctx, *o); });
}

}  // namespace ekb::cli
