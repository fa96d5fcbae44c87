// ekb show WORKLOAD: the IR, bindings, shapes, FLOPs and bytes of one workload.
#include <fmt/core.h>

#include "cli/commands.h"
#include "cli/workload_json.h"
#include "ir/printer.h"

namespace ekb::cli {

namespace {

struct ShowOptions {
  std::string workload;
  bool json = false;
};

std::string human_bytes(double b) {
  if (b < 1024) return fmt::format("{:.0f} B", b);
  if (b < 1024 * 1024) return fmt::format("{:.1f} KiB", b / 1024);
  return fmt::format("{:.2f} MiB", b / (1024 * 1024));
}

std::string human_ops(double n) {
  if (n < 1e3) return fmt::format("{:.0f}", n);
  if (n < 1e6) return fmt::format("{:.2f} K", n / 1e3);
  if (n < 1e9) return fmt::format("{:.2f} M", n / 1e6);
  return fmt::format("{:.2f} G", n / 1e9);
}

void run_show(Context& ctx, const ShowOptions& o) {
  suite::WorkloadEntry w = ctx.workload(o.workload);
  nlohmann::json j = workload_json(w);
  const ir::Pattern& p = w.pattern->module.pattern;
  if (o.json) {
    j["ir"] = ir::print_pattern(p);
    fmt::print("{}\n", j.dump(2));
    return;
  }
  fmt::print("{}\n", w.full_name());
  fmt::print("  domain {} · level {} · dtype {} · size {}{}\n", j["domain"].get<std::string>(),
             j["level"].get<std::string>(), j["dtype"].get<std::string>(),
             j["size"].get<std::string>(), j["heldout"].get<bool>() ? " · held-out" : "");
  fmt::print("  source:  {}\n", p.source);
  if (!p.summary.empty()) fmt::print("  summary: {}\n", p.summary);
  fmt::print("  file:    {}\n", w.pattern->path);
  std::string bindings;
  for (const auto& b : w.workload->bindings)
    bindings += (bindings.empty() ? "" : ", ") + b.name + " = " +
                (b.is_type ? b.type_name : std::to_string(b.int_value));
  fmt::print("  binds:   {}\n\n", bindings);
  if (!j["valid"].get<bool>()) {
    fmt::print("{}\n", j["error"].get<std::string>());
    g_exit_code = 1;
    return;
  }
  fmt::print("tensors:\n");
  for (const auto& t : j["tensors"]) {
    std::vector<int64_t> shape = t["shape"];
    double elems = 1;
    std::string s;
    for (size_t i = 0; i < shape.size(); ++i) {
      s += (i ? ", " : "") + std::to_string(shape[i]);
      elems *= static_cast<double>(shape[i]);
    }
    auto type = *ir::parse_scalar_type(t["dtype"].get<std::string>());
    fmt::print("  {:<6} {:<10} {}[{}]  {}\n", t["role"].get<std::string>(), t["name"].get<std::string>(),
               t["dtype"].get<std::string>(), s, human_bytes(elems * ir::byte_size(type)));
  }
  double flops = j["flops"], int_ops = j["int_ops"], bytes = j["min_bytes"];
  fmt::print("\ncost:\n  {}FLOP floating point, {}OP integer\n  {} must move (each input read once, each output written once)\n",
             human_ops(flops), human_ops(int_ops), human_bytes(bytes));
  fmt::print("  arithmetic intensity {:.3f} op/byte\n\n", (flops + int_ops) / bytes);
  fmt::print("compute layer:\n{}", ir::print_pattern(p));
}

}  // namespace

void add_show_command(CLI::App& app, Context& ctx) {
  auto o = std::make_shared<ShowOptions>();
  CLI::App* cmd = app.add_subcommand("show", "Show one workload: IR, shapes, FLOPs and bytes");
  cmd->add_option("workload", o->workload, "PATTERN/WORKLOAD, e.g. nn.softmax/mbert_128x512")->required();
  cmd->add_flag("--json", o->json, "Print the facts as JSON");
  cmd->callback([&ctx, o] { run_show(ctx, *o); });
}

}  // namespace ekb::cli
