// ekb trajectory show FILE [--diff]: a LEKA trajectory (docs/AGENT.md, "Trajectories") as a table,
// one row per step (layer, action, outcome, time, speedup, roofline fraction), then the final
// evaluation; --diff prints each step's diff of the candidate against the best before it.
#include <fmt/core.h>

#include "agent/trajectory.h"
#include "cli/commands.h"

namespace ekb::cli {

namespace {

struct TrajectoryOptions {
  std::string file;
  bool diff = false;
};

std::string number(const std::optional<double>& x, const char* format) {
  return x ? fmt::format(fmt::runtime(format), *x) : "-";
}

// The first line of a message, shortened for a table cell.
std::string first_line(const std::string& text, size_t width) {
  std::string line = text.substr(0, text.find('\n'));
  return line.size() > width ? line.substr(0, width - 3) + "..." : line;
}

void show_trajectory(const TrajectoryOptions& o) {
  agent::Trajectory t;
  try {
    t = agent::read_trajectory(o.file);
  } catch (const std::runtime_error& e) {
    throw UsageError(e.what());
  }
  if (t.analysis)
    fmt::print("{} on {}: {:.4g} ops, {:.4g} bytes, baseline {:.4f} ms{}\n\n", t.analysis->value("workload", ""),
               t.analysis->value("backend", ""), t.analysis->value("flops", 0.0), t.analysis->value("bytes", 0.0),
               t.analysis->value("baseline_ms", 0.0),
               t.analysis->value("roofline_ms", 0.0) > 0
                   ? fmt::format(", roofline {:.4f} ms", t.analysis->value("roofline_ms", 0.0))
                   : std::string());
  fmt::print("{:>4}  {:<8} {:<11} {:>9} {:>8} {:>8}  {}\n", "step", "layer", "outcome", "ms", "speedup", "roofline",
             "action");
  for (const auto& s : t.steps) {
    fmt::print("{:>4}  {:<8} {:<11} {:>9} {:>8} {:>8}  {}\n", s.index, agent::layer_name(s.layer), s.outcome,
               number(s.ms, "{:.4f}"), number(s.speedup, "{:.2f}x"), number(s.roofline_fraction, "{:.0%}"),
               first_line(s.action, 100));
    if (!s.message.empty() && s.outcome != "kept") fmt::print("{:>6}{}\n", "", first_line(s.message, 140));
    if (o.diff && !s.diff.empty()) fmt::print("{}\n", s.diff);
  }
  if (t.final) {
    const agent::FinalRecord& f = *t.final;
    fmt::print("\nfinal (full protocol, step {}): {} {} ms, {}; {} evaluations, {:.1f} s\n  solution {}\n", f.best_step,
               f.correct ? "correct" : "failed (" + f.error + ")", number(f.ms, "{:.4f}"),
               number(f.speedup, "{:.2f}x"), f.spent.evaluations, f.spent.wall_s, f.solution);
  } else {
    fmt::print("\n(no final record: the run stopped before its end)\n");
  }
}

}  // namespace

void add_trajectory_command(CLI::App& app, Context& ctx) {
  CLI::App* cmd = app.add_subcommand("trajectory", "Show LEKA trajectories (docs/AGENT.md)");
  cmd->require_subcommand(1);
  auto o = std::make_shared<TrajectoryOptions>();
  CLI::App* show = cmd->add_subcommand("show", "A trajectory as a table: step, layer, outcome, time, speedup");
  show->add_option("file", o->file, "PATTERN/WORKLOAD.trajectory.jsonl under an `ekb agent --out` directory")
      ->required()
      ->check(CLI::ExistingFile);
  show->add_flag("--diff", o->diff, "Print each step's diff against the best before it");
  show->callback([o] { show_trajectory(*o); });
}

}  // namespace ekb::cli
