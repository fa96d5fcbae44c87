#include "ir/target.h"

#include <stdexcept>

#include "ir/diagnostics.h"

namespace ekb::ir {

std::string_view target_name(Target t) {
  switch (t) {
    case Target::Cpu: return "cpu";
    case Target::Cuda: return "cuda";
    case Target::OpenCL: return "opencl";
  }
  return "?";
}

std::optional<Target> parse_target(std::string_view name) {
  for (Target t : kTargets)
    if (target_name(t) == name) return t;
  return std::nullopt;
}

std::vector<std::string> target_names() {
  std::vector<std::string> out;
  for (Target t : kTargets) out.emplace_back(target_name(t));
  return out;
}

Target target_from_name(std::string_view name) {
  if (auto t = parse_target(name)) return *t;
  std::string hint = did_you_mean(name, target_names());
  throw std::invalid_argument("unknown target '" + std::string(name) + "' (the targets are cpu, cuda and opencl)" +
                              (hint.empty() ? "" : "; " + hint));
}

bool is_gpu(Target t) { return kGpuTargets.contains(t); }

std::vector<Target> TargetSet::targets() const {
  std::vector<Target> out;
  for (Target t : kTargets)
    if (contains(t)) out.push_back(t);
  return out;
}

std::string target_set_text(TargetSet s) {
  if (s == kCpuTargets) return "cpu";
  if (s == kGpuTargets) return "gpu";
  std::vector<Target> ts = s.targets();
  std::string out;
  for (size_t i = 0; i < ts.size(); ++i)
    out += (i == 0 ? "" : i + 1 == ts.size() ? " or " : ", ") + std::string(target_name(ts[i]));
  return out;
}

std::optional<TargetSet> parse_layer_target(std::string_view name) {
  if (name.empty()) return kAllTargets;
  if (name == "cpu") return kCpuTargets;
  if (name == "gpu") return kGpuTargets;
  return std::nullopt;
}

std::vector<std::string> layer_target_names() { return {"cpu", "gpu"}; }

}  // namespace ekb::ir
