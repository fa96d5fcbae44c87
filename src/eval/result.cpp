#include "eval/result.h"

#include <fmt/core.h>

namespace ekb::eval {

Ledger& Ledger::operator+=(const Ledger& o) {
  llm_calls += o.llm_calls;
  input_tokens += o.input_tokens;
  output_tokens += o.output_tokens;
  cost_usd += o.cost_usd;
  evaluations += o.evaluations;
  wall_s += o.wall_s;
  return *this;
}

std::string BaselineInfo::describe() const {
  std::string out = compiler;
  if (!version.empty()) out += " " + version;
  if (compiler != "tvm-tuned") return out;
  if (tuned) return out + fmt::format(" ({} trials, records {})", tune_trials, records.substr(0, 12));
  return out + fmt::format(" ({} trials; not tuned: {})", tune_trials, note.empty() ? "no reason given" : note);
}

nlohmann::json to_json(const BaselineInfo& b) {
  nlohmann::json j = {{"compiler", b.compiler}, {"version", b.version.empty() ? nlohmann::json(nullptr) : nlohmann::json(b.version)}};
  if (b.compiler == "tvm-tuned") {
    j["tune_trials"] = b.tune_trials;
    j["tuned"] = b.tuned;
    j["records"] = b.records.empty() ? nlohmann::json(nullptr) : nlohmann::json(b.records);
    j["note"] = b.note;
  }
  return j;
}

BaselineInfo baseline_info_from_json(const nlohmann::json& j) {
  BaselineInfo b;
  if (!j.is_object()) return b;
  auto text = [&](const char* key) { return j.contains(key) && j[key].is_string() ? j[key].get<std::string>() : ""; };
  if (!text("compiler").empty()) b.compiler = text("compiler");
  b.version = text("version");
  b.tune_trials = j.value("tune_trials", 0);
  b.tuned = j.value("tuned", false);
  b.records = text("records");
  b.note = text("note");
  return b;
}

}  // namespace ekb::eval
