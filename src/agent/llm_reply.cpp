#include "agent/llm_reply.h"

#include <fmt/core.h>

#include <algorithm>
#include <cctype>
#include <optional>

#include "agent/layer_text.h"
#include "agent/llm_prompt.h"  // kLayerFence
#include "ir/target.h"
#include "llm/code_extraction.h"

namespace ekb::agent {

namespace {

constexpr size_t kMaxRationale = 300;

std::string trimmed(std::string_view s) {
  size_t b = s.find_first_not_of(" \t\r\n");
  if (b == std::string_view::npos) return "";
  size_t e = s.find_last_not_of(" \t\r\n");
  return std::string(s.substr(b, e - b + 1));
}

bool is_fence(std::string_view line) {
  size_t i = line.find_first_not_of(' ');
  return i != std::string_view::npos && i <= 3 && (line.substr(i, 3) == "```" || line.substr(i, 3) == "~~~");
}

bool is_stop(const std::string& line) { return line == "STOP" || line == "STOP." || line == "**STOP**"; }

struct Prose {
  std::string text;   // the non-blank lines before the first fence, joined by spaces
  bool stop = false;  // one of them is the word STOP
};

Prose prose_before_block(std::string_view reply) {
  Prose p;
  for (size_t pos = 0; pos < reply.size();) {
    size_t eol = reply.find('\n', pos);
    if (eol == std::string_view::npos) eol = reply.size();
    std::string_view line = reply.substr(pos, eol - pos);
    if (is_fence(line)) break;
    if (std::string t = trimmed(line); is_stop(t)) p.stop = true;
    else if (!t.empty()) p.text += (p.text.empty() ? "" : " ") + t;
    pos = eol + 1;
  }
  if (p.text.size() > kMaxRationale) p.text = p.text.substr(0, kMaxRationale) + "...";
  return p;
}

std::optional<Layer> layer_of_keyword(const std::string& keyword) {
  if (keyword == "pattern") return Layer::Compute;
  if (keyword == "schedule") return Layer::Schedule;
  if (keyword == "memory") return Layer::Memory;
  return std::nullopt;
}

// The directives of a layer's blocks, in order.
std::vector<std::string> directives_of(const std::vector<TextBlock>& blocks) {
  std::vector<std::string> out;
  for (const TextBlock& b : blocks)
    for (std::string& d : directive_lines(b.text)) out.push_back(std::move(d));
  return out;
}

std::string block_names(const std::vector<TextBlock>& blocks) {
  std::string out;
  for (const TextBlock& b : blocks) out += (out.empty() ? "" : ", ") + b.keyword;
  return out;
}

// The one block of a usable reply is a layer's text; fills `p` or returns why it is not one.
std::optional<std::string> read_layer_block(const llm::CodeBlock& block, const AgentState& state, Proposal& p) {
  // Comments alone (or a C file's preprocessor lines, which read as comments here) are no layer.
  const std::vector<TextBlock> tops = top_level_blocks(block.code);
  const std::string first = tops.empty() ? "" : tops[0].keyword;
  if (auto layer = layer_of_keyword(first)) {
    const std::vector<TextBlock> proposed = layer_blocks(tops, *layer);
    if (proposed.size() != tops.size() || (*layer == Layer::Compute && tops.size() > 1))
      return fmt::format("the block holds more than the {} layer (blocks: {}): one layer per reply",
                         layer_name(*layer), block_names(tops));
    p.layer = *layer;
    p.text = trimmed(block.code) + "\n";
    p.action = *layer == Layer::Compute
                   ? "rewrite compute"
                   : fmt::format("{}: {}", layer_name(*layer),
                                 directive_change(directives_of(layer_blocks(top_level_blocks(state.program), *layer)),
                                                  directives_of(proposed)));
    return std::nullopt;
  }
  if (block.language == kLayerFence)
    return fmt::format("an ```{} block must start with pattern, schedule or memory, not '{}'", kLayerFence, first);
  // Not a layer block: a source file, if it is in the backend's language.
  const std::string backend = state.analysis ? state.analysis->backend : "";
  const auto target = ir::parse_target(backend);
  if (!target) return fmt::format("a block that is not a layer, and the backend '{}' has no source language", backend);
  const std::string fence = "```" + block.language + "\n" + block.code + "```\n";
  llm::Extraction e = llm::extract_code(fence, *target);
  if (!e.code) return e.no_code_reason;
  if (block.language.empty())
    return "an untagged block that starts with neither pattern, schedule nor memory (a source file needs its "
           "language on the fence)";
  p.layer = Layer::Source;
  p.text = e.code->code;
  p.action = state.source.empty() ? "new source" : "edit source";
  return std::nullopt;
}

}  // namespace

Proposal unusable_proposal(const AgentState& state, std::string reason) {
  Proposal p;
  p.layer = state.layer;
  p.action = "no proposal";
  p.rationale = std::move(reason);
  p.unusable = true;
  return p;
}

Proposal parse_llm_reply(std::string_view reply, const AgentState& state) {
  if (trimmed(reply).empty()) return unusable_proposal(state, "the reply is empty");
  std::vector<llm::CodeBlock> blocks = llm::fenced_blocks(reply);
  std::erase_if(blocks, [](const llm::CodeBlock& b) { return trimmed(b.code).empty(); });
  const Prose prose = prose_before_block(reply);
  if (blocks.empty()) {
    if (prose.stop) {
      Proposal p;
      p.layer = state.layer;
      p.stop = true;
      p.action = "stop";
      p.rationale = prose.text;
      return p;
    }
    return unusable_proposal(state, "the reply has no fenced block and is not STOP");
  }
  if (blocks.size() > 1)
    return unusable_proposal(state, fmt::format("the reply has {} fenced blocks: exactly one is expected", blocks.size()));
  if (!blocks[0].closed) return unusable_proposal(state, "the block is cut short (no closing fence)");
  Proposal p;
  if (auto why_not = read_layer_block(blocks[0], state, p)) return unusable_proposal(state, *why_not);
  p.rationale = prose.text;
  return p;
}

}  // namespace ekb::agent
