#include "agent/layered_program.h"

#include <sstream>
#include <vector>

namespace ekb::agent {

namespace {

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

void append_block(std::string& out, const std::string& block) {
  if (block.empty()) return;
  if (!out.empty() && !out.ends_with("\n\n")) out += out.ends_with('\n') ? "\n" : "\n\n";
  out += block;
  if (!out.ends_with('\n')) out += '\n';
}

}  // namespace

std::string LayeredProgram::ir_text() const {
  std::string out;
  append_block(out, compute);
  append_block(out, schedule);
  append_block(out, memory);
  return out;
}

const std::string& LayeredProgram::layer_text(Layer layer) const {
  switch (layer) {
    case Layer::Compute: return compute;
    case Layer::Schedule: return schedule;
    case Layer::Memory: return memory;
    case Layer::Source: return source;
  }
  return compute;
}

LayeredProgram LayeredProgram::with(Layer layer, std::string text) const {
  LayeredProgram p = *this;
  switch (layer) {
    case Layer::Compute: p.compute = std::move(text); break;
    case Layer::Schedule: p.schedule = std::move(text); break;
    case Layer::Memory: p.memory = std::move(text); break;
    case Layer::Source: p.source = std::move(text); break;
  }
  // An IR layer changed: the candidate is the IR again, not an earlier kept source.
  if (layer != Layer::Source) p.source.clear();
  return p;
}

std::string unified_diff(const std::string& before, const std::string& after, int context) {
  if (before == after) return {};
  const std::vector<std::string> a = lines_of(before), b = lines_of(after);
  // Longest common subsequence table, from the ends, so the walk below goes forward.
  std::vector<std::vector<int>> lcs(a.size() + 1, std::vector<int>(b.size() + 1, 0));
  for (size_t i = a.size(); i-- > 0;)
    for (size_t j = b.size(); j-- > 0;)
      lcs[i][j] = a[i] == b[j] ? lcs[i + 1][j + 1] + 1 : std::max(lcs[i + 1][j], lcs[i][j + 1]);
  // The edit script: each line kept (' '), removed ('-') or added ('+'), with its line numbers.
  struct Edit {
    char op;
    size_t i, j;  // the line's index in a (' ', '-') and in b (' ', '+'); the other side's next line
  };
  std::vector<Edit> edits;
  for (size_t i = 0, j = 0; i < a.size() || j < b.size();) {
    if (i < a.size() && j < b.size() && a[i] == b[j]) edits.push_back({' ', i++, j++});
    else if (i < a.size() && (j == b.size() || lcs[i + 1][j] >= lcs[i][j + 1])) edits.push_back({'-', i++, j});
    else edits.push_back({'+', i, j++});
  }
  // Hunks: the runs of lines within `context` lines of a change.
  const size_t n = edits.size(), c = static_cast<size_t>(std::max(context, 0));
  std::vector<bool> shown(n, false);
  for (size_t k = 0; k < n; ++k)
    if (edits[k].op != ' ')
      for (size_t d = k >= c ? k - c : 0; d < n && d <= k + c; ++d) shown[d] = true;
  std::string out = "--- before\n+++ after\n";
  for (size_t begin = 0; begin < n;) {
    if (!shown[begin]) {
      ++begin;
      continue;
    }
    size_t end = begin, a_count = 0, b_count = 0;
    for (; end < n && shown[end]; ++end) {
      a_count += edits[end].op != '+';
      b_count += edits[end].op != '-';
    }
    out += "@@ -" + std::to_string(edits[begin].i + 1) + "," + std::to_string(a_count) + " +" +
           std::to_string(edits[begin].j + 1) + "," + std::to_string(b_count) + " @@\n";
    for (size_t k = begin; k < end; ++k)
      out += edits[k].op + (edits[k].op == '+' ? b[edits[k].j] : a[edits[k].i]) + "\n";
    begin = end;
  }
  return out;
}

}  // namespace ekb::agent
