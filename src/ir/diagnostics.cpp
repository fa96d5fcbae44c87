#include "ir/diagnostics.h"

#include <algorithm>

namespace ekb::ir {

std::string Diagnostic::format() const {
  std::string out = file.empty() ? std::string("<input>") : file;
  out += ":" + std::to_string(loc.line) + ":" + std::to_string(loc.col) + ": error: " + message;
  if (!hint.empty()) out += "\n  hint: " + hint;
  return out;
}

void Diagnostics::error(SourceLoc loc, std::string message, std::string hint) {
  items_.push_back(Diagnostic{file_, loc, std::move(message), std::move(hint)});
}

std::string Diagnostics::format() const {
  std::string out;
  for (const auto& d : items_) out += d.format() + "\n";
  return out;
}

namespace {
size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t sub = prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, sub});
    }
    std::swap(prev, cur);
  }
  return prev[b.size()];
}
}  // namespace

std::string nearest_name(std::string_view name, const std::vector<std::string>& candidates) {
  std::string best;
  size_t best_d = SIZE_MAX;
  for (const auto& c : candidates) {
    size_t d = edit_distance(name, c);
    if (d < best_d) best_d = d, best = c;
  }
  // Suggest only plausible typos: at most a third of the name's length, and at least one edit.
  size_t limit = std::max<size_t>(1, std::max(name.size(), best.size()) / 3);
  return best_d <= limit ? best : std::string();
}

std::string did_you_mean(std::string_view name, const std::vector<std::string>& candidates) {
  std::string n = nearest_name(name, candidates);
  return n.empty() ? std::string() : "did you mean '" + n + "'?";
}

}  // namespace ekb::ir
