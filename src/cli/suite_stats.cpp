// ekb suite stats: how many patterns and workloads the suite has, by domain, level, dtype and
// size class, with the held-out counts; a table or JSON. (`suite` groups commands about the suite
// as a whole.)
#include <fmt/core.h>
#include <fmt/ranges.h>

#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "suite/selection.h"
#include "suite/stats.h"

namespace ekb::cli {

namespace {

struct StatsOptions {
  suite::Selection selection;
  bool json = false;
};

nlohmann::json counts_json(const suite::StatCounts& c) {
  return {{"patterns", c.patterns}, {"workloads", c.workloads}, {"heldout", c.heldout}};
}

nlohmann::json table_json(const std::map<std::string, suite::StatCounts>& table) {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& [key, c] : table) j[key] = counts_json(c);
  return j;
}

void print_table(const std::string& title, const std::map<std::string, suite::StatCounts>& table) {
  fmt::print("\n{:<14} {:>9} {:>10} {:>9}\n", title, "patterns", "workloads", "held-out");
  for (const auto& [key, c] : table) fmt::print("  {:<12} {:>9} {:>10} {:>9}\n", key, c.patterns, c.workloads, c.heldout);
}

void run_stats(Context& ctx, StatsOptions& o) {
  suite::SuiteStats s = suite::compute_stats(selected_workloads(ctx, o.selection, false));
  if (o.json) {
    nlohmann::json j = counts_json(s.total);
    j["patterns_with_heldout"] = s.patterns_with_heldout;
    j["patterns_without_new_heldout_shape"] = s.without_new_heldout_shape;
    j["by_domain"] = table_json(s.by_domain);
    j["by_level"] = table_json(s.by_level);
    j["by_dtype"] = table_json(s.by_dtype);
    j["by_size"] = table_json(s.by_size);
    fmt::print("{}\n", j.dump(2));
    return;
  }
  fmt::print("{} patterns, {} workloads ({} held-out)\n", s.total.patterns, s.total.workloads, s.total.heldout);
  fmt::print("held-out rule: {} of {} patterns have a held-out workload with a shape no public workload has\n",
             s.total.patterns - static_cast<int>(s.without_new_heldout_shape.size()), s.total.patterns);
  if (!s.without_new_heldout_shape.empty())
    fmt::print("  without one: {}\n", fmt::join(s.without_new_heldout_shape, ", "));
  print_table("by domain", s.by_domain);
  print_table("by level", s.by_level);
  print_table("by dtype", s.by_dtype);
  print_table("by size", s.by_size);
  fmt::print("\n(a pattern counts once in every dtype and size class one of its workloads has)\n");
}

}  // namespace

void add_suite_command(CLI::App& app, Context& ctx) {
  CLI::App* group = app.add_subcommand("suite", "Facts about the suite as a whole");
  group->require_subcommand(1);
  auto o = std::make_shared<StatsOptions>();
  CLI::App* cmd = group->add_subcommand("stats", "Count patterns and workloads by domain, level, dtype and size class");
  cmd->add_option("names", o->selection.names, "Globs over PATTERN/WORKLOAD or pattern names (default: all)");
  add_selection_filters(cmd, o->selection);
  cmd->add_flag("--json", o->json, "Print the counts as JSON");
  cmd->callback([&ctx, o] { run_stats(ctx, *o); });
}

}  // namespace ekb::cli
