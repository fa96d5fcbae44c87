// ekb directives [--json | --markdown]: the schedule and memory directives of the IR, from the
// directive table (ir/directives.h). The JSON is complete (every verb with its layer, arguments and
// their kinds, targets, pass and doc): a program choosing directives reads its action space from it.
#include <fmt/core.h>

#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "ir/directives.h"

namespace ekb::cli {

namespace {

struct DirectivesOptions {
  bool json = false;
  bool markdown = false;
};

nlohmann::json targets_json(ir::TargetSet targets) {
  nlohmann::json out = nlohmann::json::array();
  for (ir::Target t : targets.targets()) out.push_back(ir::target_name(t));
  return out;
}

nlohmann::json param_json(const ir::DirectiveInfo& d, const ir::DirectiveParam& p) {
  nlohmann::json j = {{"name", p.name}, {"kind", ir::arg_kind_name(p.kind)}};
  if (const auto& choices = ir::arg_kind_choices(p.kind); !choices.empty()) j["choices"] = choices;
  if (p.of >= 0) j["of"] = d.params[static_cast<size_t>(p.of)].name;
  if (!p.becomes.empty()) {
    nlohmann::json names = nlohmann::json::array();
    for (int n : p.becomes) names.push_back(d.params[static_cast<size_t>(n)].name);
    j["becomes"] = names;
  }
  if (p.repeated) j["min_count"] = p.min_count;
  if (!p.default_value.empty()) j["default"] = p.default_value;
  return j;
}

nlohmann::json directives_json() {
  nlohmann::json directives = nlohmann::json::array();
  for (const ir::DirectiveInfo& d : ir::directive_table()) {
    nlohmann::json args = nlohmann::json::array(), keywords = nlohmann::json::array();
    for (const ir::DirectiveParam& p : d.params) args.push_back(param_json(d, p));
    for (const ir::DirectiveParam& k : d.keywords) keywords.push_back(param_json(d, k));
    directives.push_back({{"verb", d.verb},
                          {"layer", ir::layer_name(d.layer)},
                          {"signature", ir::directive_signature(d)},
                          {"args", args},
                          {"keywords", keywords},
                          {"targets", targets_json(d.targets)},
                          {"pass", d.pass},
                          {"doc", d.doc}});
  }
  nlohmann::json kinds = nlohmann::json::array();
  for (int k = 0; k <= static_cast<int>(ir::DirectiveArgKind::CacheLines); ++k) {
    const auto kind = static_cast<ir::DirectiveArgKind>(k);
    nlohmann::json j = {{"kind", ir::arg_kind_name(kind)}, {"doc", ir::arg_kind_doc(kind)},
                        {"creates_name", ir::creates_name(kind)}};
    if (const auto& choices = ir::arg_kind_choices(kind); !choices.empty()) j["choices"] = choices;
    kinds.push_back(j);
  }
  nlohmann::json layer_targets = nlohmann::json::object();
  for (const std::string& name : ir::layer_target_names())
    layer_targets[name] = targets_json(*ir::parse_layer_target(name));
  return {{"directives", directives}, {"arg_kinds", kinds}, {"layer_targets", layer_targets}};
}

void run_directives(const DirectivesOptions& o) {
  if (o.json && o.markdown) throw UsageError("--json and --markdown exclude each other");
  if (o.json) {
    fmt::print("{}\n", directives_json().dump(2));
    return;
  }
  if (o.markdown) {
    fmt::print("{}", ir::directive_table_markdown());
    return;
  }
  for (ir::LayerKind layer : {ir::LayerKind::Schedule, ir::LayerKind::Memory}) {
    fmt::print("{} directives:\n", ir::layer_name(layer));
    for (const ir::DirectiveInfo& d : ir::directive_table()) {
      if (d.layer != layer) continue;
      const std::string where = d.targets == ir::kAllTargets ? "" : " (" + ir::target_set_text(d.targets) + " only)";
      fmt::print("  {}{}\n      {}\n", ir::directive_signature(d), where, d.doc);
    }
  }
}

}  // namespace

void add_directives_command(CLI::App& app, Context& ctx) {
  (void)ctx;
  auto o = std::make_shared<DirectivesOptions>();
  CLI::App* cmd = app.add_subcommand("directives", "List the IR's schedule and memory directives (docs/IR.md)");
  cmd->add_flag("--json", o->json, "As JSON: each directive's layer, arguments and their kinds, targets, pass and doc");
  cmd->add_flag("--markdown", o->markdown, "As the tables of docs/IR.md");
  cmd->callback([o] { run_directives(*o); });
}

}  // namespace ekb::cli
