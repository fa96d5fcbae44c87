#include "eval/solution_meta.h"

#include <fstream>
#include <sstream>
#include <stdexcept>

namespace ekb::eval {

namespace {

using nlohmann::json;

// The value of `key` in `j`, or `fallback` when absent or null; a value of another type is an error.
template <typename T>
T get_or(const json& j, const char* key, T fallback, const std::string& origin) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return fallback;
  try {
    return it->get<T>();
  } catch (const json::exception&) {
    throw std::invalid_argument(origin + ": \"" + key + "\" has the wrong type (" + it->dump() + ")");
  }
}

json string_or_null(const std::string& s) { return s.empty() ? json(nullptr) : json(s); }

}  // namespace

ErrorKind SolutionMeta::failure_kind() const {
  if (status == "no_code") return ErrorKind::NoCode;
  if (status == "failed") return ErrorKind::GenerationFailed;
  return ErrorKind::Missing;
}

SolutionMeta parse_solution_meta(const std::string& text, const std::string& origin) {
  json j;
  try {
    j = json::parse(text);
  } catch (const json::parse_error& e) {
    throw std::invalid_argument(origin + ": not valid JSON: " + e.what());
  }
  if (!j.is_object()) throw std::invalid_argument(origin + ": a solution's metadata must be a JSON object");
  SolutionMeta m;
  m.method = get_or<std::string>(j, "method", "", origin);
  m.profile = get_or<std::string>(j, "profile", "", origin);
  m.model = get_or<std::string>(j, "model", "", origin);
  m.endpoint_kind = get_or<std::string>(j, "endpoint_kind", "", origin);
  m.prompt_hash = get_or<std::string>(j, "prompt_hash", "", origin);
  m.sample = get_or<int>(j, "sample", 0, origin);
  if (j.contains("temperature") && !j["temperature"].is_null()) m.temperature = get_or<double>(j, "temperature", 0, origin);
  m.status = get_or<std::string>(j, "status", "ok", origin);
  if (m.status != "ok" && m.status != "no_code" && m.status != "failed")
    throw std::invalid_argument(origin + ": \"status\" must be \"ok\", \"no_code\" or \"failed\", not \"" + m.status + "\"");
  m.error = get_or<std::string>(j, "error", "", origin);
  if (auto it = j.find("ledger"); it != j.end() && !it->is_null()) {
    if (!it->is_object()) throw std::invalid_argument(origin + ": \"ledger\" must be an object");
    m.ledger = parse_ledger(*it, origin + " ledger");
  }
  m.latency_s = get_or<double>(j, "latency_s", 0, origin);
  m.cached = get_or<bool>(j, "cached", false, origin);
  if (j.contains("check_calls") && !j["check_calls"].is_null())
    m.check_calls = get_or<int64_t>(j, "check_calls", 0, origin);
  m.transcript = get_or<std::string>(j, "transcript", "", origin);
  m.backend = get_or<std::string>(j, "backend", "", origin);
  return m;
}

SolutionMeta read_solution_meta(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::invalid_argument("cannot read " + path);
  std::stringstream ss;
  ss << in.rdbuf();
  return parse_solution_meta(ss.str(), path);
}

json to_json(const Ledger& l) {
  return {{"llm_calls", l.llm_calls}, {"input_tokens", l.input_tokens}, {"output_tokens", l.output_tokens},
          {"cost_usd", l.cost_usd},   {"evaluations", l.evaluations},   {"wall_s", l.wall_s}};
}

Ledger parse_ledger(const json& j, const std::string& where) {
  if (!j.is_object()) throw std::invalid_argument(where + " must be an object");
  Ledger l;
  l.llm_calls = get_or<int64_t>(j, "llm_calls", 0, where);
  l.input_tokens = get_or<int64_t>(j, "input_tokens", 0, where);
  l.output_tokens = get_or<int64_t>(j, "output_tokens", 0, where);
  l.cost_usd = get_or<double>(j, "cost_usd", 0, where);
  l.evaluations = get_or<int64_t>(j, "evaluations", 0, where);
  l.wall_s = get_or<double>(j, "wall_s", 0, where);
  return l;
}

json to_json(const SolutionMeta& m) {
  json j = {{"method", m.method},
            {"profile", string_or_null(m.profile)},
            {"model", string_or_null(m.model)},
            {"endpoint_kind", string_or_null(m.endpoint_kind)},
            {"prompt_hash", string_or_null(m.prompt_hash)},
            {"sample", m.sample},
            {"temperature", m.temperature ? json(*m.temperature) : json(nullptr)},
            {"status", m.status},
            {"ledger", to_json(m.ledger)},
            {"latency_s", m.latency_s},
            {"cached", m.cached}};
  if (!m.ok()) j["error"] = m.error;
  if (m.check_calls) j["check_calls"] = *m.check_calls;
  if (!m.transcript.empty()) j["transcript"] = m.transcript;
  if (!m.backend.empty()) j["backend"] = m.backend;
  return j;
}

std::string meta_file_name(const std::string& workload_name, int sample) {
  return workload_name + ".s" + std::to_string(sample) + ".meta.json";
}

}  // namespace ekb::eval
