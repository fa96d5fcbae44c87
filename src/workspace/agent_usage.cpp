#include "workspace/agent_usage.h"

#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>
#include <vector>

namespace ekb::workspace {

namespace {

using nlohmann::json;

int64_t int_at(const json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_number() ? it->get<int64_t>() : 0;
}

double number_at(const json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_number() ? it->get<double>() : 0;
}

// Every line of `text` that is a JSON object (JSONL streams mix in the odd non-JSON line).
std::vector<json> json_lines(const std::string& text) {
  std::vector<json> out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.find('{') == std::string::npos) continue;
    json j = json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (j.is_object()) out.push_back(std::move(j));
  }
  return out;
}

bool is_claude_result(const json& j) {
  return j.value("type", "") == "result" && (j.contains("total_cost_usd") || j.contains("num_turns"));
}

AgentUsage claude_usage(const json& r) {
  AgentUsage u;
  u.agent = "claude-code";
  u.ledger.llm_calls = int_at(r, "num_turns");
  u.ledger.cost_usd = number_at(r, "total_cost_usd");
  u.ledger.wall_s = number_at(r, "duration_ms") / 1000.0;
  if (auto it = r.find("usage"); it != r.end() && it->is_object()) {
    u.ledger.input_tokens = int_at(*it, "input_tokens") + int_at(*it, "cache_creation_input_tokens") +
                            int_at(*it, "cache_read_input_tokens");
    u.ledger.output_tokens = int_at(*it, "output_tokens");
  }
  // modelUsage is keyed by model; the one with the most output did the work (a small model may
  // only have named the session).
  if (auto it = r.find("modelUsage"); it != r.end() && it->is_object()) {
    int64_t most = -1;
    for (const auto& [model, usage] : it->items()) {
      int64_t out = usage.is_object() ? int_at(usage, "outputTokens") : 0;
      if (out > most) {
        most = out;
        u.model = model;
      }
    }
  }
  return u;
}

std::optional<AgentUsage> codex_usage(const std::vector<json>& events) {
  AgentUsage u;
  u.agent = "codex";
  bool turns = false, totals = false;
  json last_total;
  int64_t token_counts = 0;
  for (const auto& e : events) {
    const std::string type = e.value("type", "");
    if (type == "thread.started") u.agent = "codex";
    if ((type == "turn.completed" || type == "turn.failed") && e.contains("usage") && e["usage"].is_object()) {
      turns = true;
      ++u.ledger.llm_calls;
      u.ledger.input_tokens += int_at(e["usage"], "input_tokens");
      u.ledger.output_tokens += int_at(e["usage"], "output_tokens");
    }
    // Older streams: {"id": ..., "msg": {"type": "token_count", "info": {"total_token_usage": {...}}}}.
    if (auto msg = e.find("msg"); msg != e.end() && msg->is_object() && msg->value("type", "") == "token_count") {
      ++token_counts;
      if (auto info = msg->find("info"); info != msg->end() && info->is_object() && info->contains("total_token_usage")) {
        totals = true;
        last_total = (*info)["total_token_usage"];
      }
    }
    if (e.contains("model") && e["model"].is_string()) u.model = e["model"].get<std::string>();
  }
  if (turns) return u;
  if (totals && last_total.is_object()) {
    u.ledger.llm_calls = token_counts;
    u.ledger.input_tokens = int_at(last_total, "input_tokens");
    u.ledger.output_tokens = int_at(last_total, "output_tokens");
    return u;
  }
  return std::nullopt;
}

// "1.2k" -> 1200, "3,456" -> 3456, "2.1M" -> 2100000.
int64_t aider_count(std::string digits, const std::string& suffix) {
  std::erase(digits, ',');
  double v = std::stod(digits);
  if (suffix == "k" || suffix == "K") v *= 1e3;
  if (suffix == "m" || suffix == "M") v *= 1e6;
  return static_cast<int64_t>(v + 0.5);
}

std::optional<AgentUsage> aider_usage(const std::string& text) {
  static const std::regex kSent(R"(Tokens:\s*([\d.,]+)([kKmM]?) sent)");
  static const std::regex kReceived(R"(([\d.,]+)([kKmM]?) received)");
  static const std::regex kSession(R"(\$\s*([\d.]+) session)");
  AgentUsage u;
  u.agent = "aider";
  std::istringstream in(text);
  std::string line;
  std::smatch m;
  while (std::getline(in, line)) {
    if (!std::regex_search(line, m, kSent)) continue;
    ++u.ledger.llm_calls;
    u.ledger.input_tokens += aider_count(m[1], m[2]);
    if (std::regex_search(line, m, kReceived)) u.ledger.output_tokens += aider_count(m[1], m[2]);
    if (std::regex_search(line, m, kSession)) u.ledger.cost_usd = std::stod(m[1]);  // running total
  }
  if (u.ledger.llm_calls == 0) return std::nullopt;
  return u;
}

}  // namespace

std::optional<AgentUsage> parse_agent_usage(const std::string& transcript) {
  json whole = json::parse(transcript, nullptr, /*allow_exceptions=*/false);
  if (whole.is_object() && is_claude_result(whole)) return claude_usage(whole);
  // Claude Code's --output-format json prints an array of messages in some versions.
  if (whole.is_array())
    for (auto it = whole.rbegin(); it != whole.rend(); ++it)
      if (it->is_object() && is_claude_result(*it)) return claude_usage(*it);
  std::vector<json> lines = json_lines(transcript);
  for (auto it = lines.rbegin(); it != lines.rend(); ++it)
    if (is_claude_result(*it)) return claude_usage(*it);
  if (auto codex = codex_usage(lines)) return codex;
  return aider_usage(transcript);
}

}  // namespace ekb::workspace
