#include "cli/workload_json.h"

#include "ir/cost.h"

namespace ekb::cli {

nlohmann::json workload_json(const suite::WorkloadEntry& w) {
  const ir::Pattern& p = w.pattern->module.pattern;
  nlohmann::json j;
  j["name"] = w.full_name();
  j["pattern"] = p.name;
  j["workload"] = w.workload->name;
  j["domain"] = p.domain();
  j["level"] = std::string(ir::level_name(p.level));
  j["dtype"] = suite::workload_dtype(w);
  j["size"] = suite::workload_size_class(w);
  j["heldout"] = w.workload->has_tag("heldout");
  j["tags"] = w.workload->tags;
  j["source"] = p.source;
  j["file"] = w.pattern->path;
  nlohmann::json params = nlohmann::json::object();
  for (const auto& b : w.workload->bindings)
    params[b.name] = b.is_type ? nlohmann::json(b.type_name) : nlohmann::json(b.int_value);
  j["bindings"] = params;
  try {
    ir::Instance inst = suite::bind_workload(w);
    nlohmann::json tensors = nlohmann::json::array();
    for (const auto& t : inst.tensors) {
      if (t.decl->role == ir::TensorRole::Temp) continue;
      tensors.push_back({{"name", t.decl->name},
                         {"role", std::string(ir::role_name(t.decl->role))},
                         {"dtype", std::string(ir::scalar_type_name(t.type))},
                         {"shape", t.shape}});
    }
    ir::CostFacts cost = ir::compute_cost(inst);
    j["valid"] = true;
    j["tensors"] = tensors;
    j["flops"] = cost.flops;
    j["int_ops"] = cost.int_ops;
    j["min_bytes"] = cost.min_bytes;
  } catch (const suite::SuiteError& e) {
    j["valid"] = false;
    j["error"] = e.what();
    j["tensors"] = nullptr;
    j["flops"] = nullptr;
    j["int_ops"] = nullptr;
    j["min_bytes"] = nullptr;
  }
  return j;
}

}  // namespace ekb::cli
