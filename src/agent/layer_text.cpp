#include "agent/layer_text.h"

#include <algorithm>
#include <cctype>

namespace ekb::agent {

namespace {

bool is_space(char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; }
bool is_word(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_' || c == '.'; }

std::string trimmed(std::string_view s) {
  size_t b = 0, e = s.size();
  while (b < e && is_space(s[b])) ++b;
  while (e > b && is_space(s[e - 1])) --e;
  return std::string(s.substr(b, e - b));
}

size_t skip_line(std::string_view text, size_t i) {
  size_t eol = text.find('\n', i);
  return eol == std::string_view::npos ? text.size() : eol + 1;
}

// The end of the block starting at `start`: after its matching closing brace; at the end of its
// first line when no brace opens by then (a stray line). `closed` says whether the braces balanced.
size_t block_end(std::string_view text, size_t start, bool& closed) {
  int depth = 0;
  bool opened = false;
  closed = false;
  for (size_t i = start; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '#') {
      i = skip_line(text, i) - 1;
      if (!opened) {
        // A header ends at its line unless the brace opens on the next one.
        size_t next = i + 1;
        while (next < text.size() && is_space(text[next])) ++next;
        if (next >= text.size() || text[next] != '{') return i + 1;
      }
    } else if (c == '"') {
      for (++i; i < text.size() && text[i] != '"'; ++i)
        if (text[i] == '\\') ++i;
    } else if (c == '{') {
      ++depth;
      opened = true;
    } else if (c == '}') {
      if (--depth == 0 && opened) {
        closed = true;
        return i + 1;
      }
    } else if (c == '\n' && !opened) {
      size_t next = i + 1;
      while (next < text.size() && is_space(text[next])) ++next;
      if (next >= text.size() || text[next] != '{') return i + 1;
    }
  }
  return text.size();
}

}  // namespace

std::vector<TextBlock> top_level_blocks(std::string_view text) {
  std::vector<TextBlock> blocks;
  size_t i = 0;
  while (i < text.size()) {
    if (is_space(text[i])) {
      ++i;
      continue;
    }
    if (text[i] == '#') {
      i = skip_line(text, i);
      continue;
    }
    TextBlock b;
    size_t w = i;
    while (w < text.size() && is_word(text[w])) ++w;
    b.keyword = std::string(text.substr(i, w - i));
    if (b.keyword.empty()) b.keyword = std::string(1, text[i]);
    const size_t end = block_end(text, i, b.closed);
    b.text = trimmed(text.substr(i, end - i));
    if (b.keyword == "schedule" || b.keyword == "memory") {
      size_t t = w;
      while (t < end && (text[t] == ' ' || text[t] == '\t')) ++t;
      size_t te = t;
      while (te < end && is_word(text[te])) ++te;
      b.target = std::string(text.substr(t, te - t));
    }
    blocks.push_back(std::move(b));
    i = std::max(end, i + 1);
  }
  return blocks;
}

std::vector<TextBlock> layer_blocks(const std::vector<TextBlock>& blocks, Layer layer) {
  std::vector<TextBlock> out;
  bool after_memory = false;
  for (const TextBlock& b : blocks) {
    after_memory = after_memory || b.keyword == "memory";
    const bool in_layer = layer == Layer::Compute    ? b.keyword == "pattern"
                          : layer == Layer::Schedule ? b.keyword == "schedule" && !after_memory
                          : layer == Layer::Memory   ? b.keyword == "memory" || (b.keyword == "schedule" && after_memory)
                                                     : false;
    if (in_layer) out.push_back(b);
  }
  return out;
}

std::vector<std::string> directive_lines(std::string_view block_text) {
  const size_t open = block_text.find('{');
  const size_t close = block_text.rfind('}');
  if (open == std::string_view::npos) return {};
  std::string_view body =
      block_text.substr(open + 1, (close == std::string_view::npos || close < open ? block_text.size() : close) - open - 1);
  std::vector<std::string> lines;
  for (size_t p = 0; p < body.size();) {
    size_t eol = body.find('\n', p);
    if (eol == std::string_view::npos) eol = body.size();
    std::string_view line = body.substr(p, eol - p);
    line = line.substr(0, line.find('#'));
    if (std::string t = trimmed(line); !t.empty()) lines.push_back(std::move(t));
    p = eol + 1;
  }
  return lines;
}

std::string directive_change(const std::vector<std::string>& before, const std::vector<std::string>& after) {
  // A multiset difference: a directive written twice and kept once is one removal.
  std::vector<std::string> removed = before, added;
  for (const std::string& d : after) {
    auto it = std::find(removed.begin(), removed.end(), d);
    if (it != removed.end()) removed.erase(it);
    else added.push_back(d);
  }
  if (added.empty() && removed.empty()) return before == after ? "no change" : "reorder directives";
  constexpr size_t kShown = 4;
  std::string out;
  size_t shown = 0;
  auto list = [&](const std::vector<std::string>& ds, char sign) {
    for (const std::string& d : ds) {
      if (shown == kShown) return;
      out += (out.empty() ? "" : "; ") + std::string(1, sign) + d;
      ++shown;
    }
  };
  list(added, '+');
  list(removed, '-');
  if (const size_t all = added.size() + removed.size(); all > shown) out += " (+" + std::to_string(all - shown) + " more)";
  return out;
}

}  // namespace ekb::agent
