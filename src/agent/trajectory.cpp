#include "agent/trajectory.h"

#include <filesystem>
#include <stdexcept>

#include "eval/solution_meta.h"

namespace ekb::agent {

namespace {

nlohmann::json optional_number(const std::optional<double>& x) { return x ? nlohmann::json(*x) : nlohmann::json(); }

std::optional<double> number_or_null(const nlohmann::json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return std::nullopt;
  return it->get<double>();
}

}  // namespace

nlohmann::json to_json(const WorkloadAnalysis& a) {
  nlohmann::json stages = nlohmann::json::array();
  for (const auto& s : a.stages) {
    nlohmann::json loops = nlohmann::json::array();
    for (const auto& l : s.loops) loops.push_back({{"name", l.name}, {"extent", l.extent}, {"reduction", l.reduction}});
    stages.push_back({{"name", s.name}, {"output", s.output}, {"loops", loops}, {"reads", s.reads}});
  }
  return {{"workload", a.workload},
          {"backend", a.backend},
          {"flops", a.flops},
          {"bytes", a.bytes},
          {"arithmetic_intensity", a.arithmetic_intensity},
          {"baseline", a.baseline},
          {"baseline_ms", a.baseline_ms},
          {"roofline_ms", a.roofline_ms},
          {"stages", stages},
          {"default_loop_ir", a.default_loop_ir}};
}

nlohmann::json to_json(const Step& s) {
  return {{"step", s.index},
          {"layer", layer_name(s.layer)},
          {"action", s.action},
          {"outcome", s.outcome},
          {"message", s.message},
          {"ms", optional_number(s.ms)},
          {"speedup", optional_number(s.speedup)},
          {"roofline_fraction", optional_number(s.roofline_fraction)},
          {"cost", eval::to_json(s.cost)},
          {"diff", s.diff}};
}

Step step_from_json(const nlohmann::json& j) {
  Step s;
  s.index = j.at("step").get<int>();
  const std::string layer = j.at("layer").get<std::string>();
  auto parsed = parse_layer(layer);
  if (!parsed) throw std::runtime_error("unknown layer '" + layer + "'");
  s.layer = *parsed;
  s.action = j.value("action", "");
  s.outcome = j.at("outcome").get<std::string>();
  s.message = j.value("message", "");
  s.ms = number_or_null(j, "ms");
  s.speedup = number_or_null(j, "speedup");
  s.roofline_fraction = number_or_null(j, "roofline_fraction");
  if (auto it = j.find("cost"); it != j.end()) s.cost = eval::parse_ledger(*it, "cost");
  s.diff = j.value("diff", "");
  return s;
}

nlohmann::json to_json(const FinalRecord& f) {
  return {{"solution", f.solution},
          {"best_step", f.best_step},
          {"correct", f.correct},
          {"error", f.error},
          {"message", f.message},
          {"ms", optional_number(f.ms)},
          {"speedup", optional_number(f.speedup)},
          {"roofline_fraction", optional_number(f.roofline_fraction)},
          {"spent", eval::to_json(f.spent)}};
}

FinalRecord final_from_json(const nlohmann::json& j) {
  FinalRecord f;
  f.solution = j.value("solution", "");
  f.best_step = j.value("best_step", 0);
  f.correct = j.value("correct", false);
  f.error = j.value("error", "");
  f.message = j.value("message", "");
  f.ms = number_or_null(j, "ms");
  f.speedup = number_or_null(j, "speedup");
  f.roofline_fraction = number_or_null(j, "roofline_fraction");
  if (auto it = j.find("spent"); it != j.end()) f.spent = eval::parse_ledger(*it, "spent");
  return f;
}

TrajectoryWriter::TrajectoryWriter(const std::string& path) : path_(path) {
  std::filesystem::path parent = std::filesystem::path(path).parent_path();
  if (!parent.empty()) std::filesystem::create_directories(parent);
  out_.open(path, std::ios::trunc);
  if (!out_) throw std::runtime_error("cannot write the trajectory " + path);
}

void TrajectoryWriter::append(nlohmann::json record, const char* kind) {
  nlohmann::json line = {{"record", kind}};
  line.update(record);
  out_ << line.dump() << '\n';
  out_.flush();  // a killed run keeps every line written
}

Trajectory read_trajectory(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read the trajectory " + path);
  Trajectory t;
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    if (line.empty()) continue;
    nlohmann::json j = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded()) {
      if (in.peek() == EOF) break;  // the last line of a killed run
      throw std::runtime_error(path + ":" + std::to_string(number) + ": not a JSON object");
    }
    try {
      const std::string kind = j.at("record").get<std::string>();
      if (kind == "analysis") t.analysis = j;
      else if (kind == "step") t.steps.push_back(step_from_json(j));
      else if (kind == "final") t.final = final_from_json(j);
    } catch (const std::exception& e) {
      throw std::runtime_error(path + ":" + std::to_string(number) + ": " + e.what());
    }
  }
  return t;
}

}  // namespace ekb::agent
