#include "agent/budget.h"

#include <charconv>
#include <sstream>
#include <stdexcept>

namespace ekb::agent {

namespace {

constexpr const char* kKeys = "evaluations, wall, llm_calls, input_tokens, output_tokens, usd";

template <typename T>
T parse_number(const std::string& key, const std::string& value) {
  T x{};
  const char* end = value.data() + value.size();
  auto [ptr, ec] = std::from_chars(value.data(), end, x);
  if (ec != std::errc() || ptr != end || x < 0)
    throw std::invalid_argument("budget: '" + key + "=" + value + "' is not a non-negative number");
  return x;
}

}  // namespace

eval::Ledger parse_budget(const std::string& text) {
  eval::Ledger b;
  std::istringstream in(text);
  for (std::string part; std::getline(in, part, ',');) {
    const size_t eq = part.find('=');
    if (eq == std::string::npos)
      throw std::invalid_argument("budget: '" + part + "' is not KEY=VALUE (keys: " + kKeys + ")");
    const std::string key = part.substr(0, eq), value = part.substr(eq + 1);
    if (key == "evaluations") b.evaluations = parse_number<int64_t>(key, value);
    else if (key == "wall") b.wall_s = parse_number<double>(key, value);
    else if (key == "llm_calls") b.llm_calls = parse_number<int64_t>(key, value);
    else if (key == "input_tokens") b.input_tokens = parse_number<int64_t>(key, value);
    else if (key == "output_tokens") b.output_tokens = parse_number<int64_t>(key, value);
    else if (key == "usd") b.cost_usd = parse_number<double>(key, value);
    else throw std::invalid_argument("budget: unknown key '" + key + "' (keys: " + kKeys + ")");
  }
  return b;
}

bool budget_exhausted(const eval::Ledger& spent, const eval::Ledger& budget) {
  return (budget.evaluations > 0 && spent.evaluations >= budget.evaluations) ||
         (budget.wall_s > 0 && spent.wall_s >= budget.wall_s) ||
         (budget.llm_calls > 0 && spent.llm_calls >= budget.llm_calls) ||
         (budget.input_tokens > 0 && spent.input_tokens >= budget.input_tokens) ||
         (budget.output_tokens > 0 && spent.output_tokens >= budget.output_tokens) ||
         (budget.cost_usd > 0 && spent.cost_usd >= budget.cost_usd);
}

}  // namespace ekb::agent
