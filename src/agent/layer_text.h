// The layered .ekb text as blocks, read without parsing: a model's block may be invalid (the loop's
// verifier says how), yet the llm policy must still tell which layer it is and what it changed.
// Braces are counted outside strings and `#` comments, so a `pattern`'s nested braces and a
// `source "..."` header holding one do not end a block early.
#pragma once
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "agent/policy.h"

namespace ekb::agent {

// One top-level block: `pattern NAME { ... }`, `workload ...`, `schedule [TARGET] { ... }`,
// `memory [TARGET] { ... }`, or anything else at depth 0 (keyword: its first word).
struct TextBlock {
  std::string keyword;  // "pattern", "workload", "schedule", "memory", or the stray first word
  std::string target;   // schedule/memory: the header's target ("cpu", "gpu"; "" for every target)
  std::string text;     // the block from its keyword to its closing brace (or the end)
  bool closed = false;  // its braces balance
};

// The top-level blocks of `text`, in order (comments and blank lines between them skipped).
std::vector<TextBlock> top_level_blocks(std::string_view text);

// The blocks of `layer` among a layered text's blocks: compute, the pattern; schedule, the
// schedule blocks before the first memory block; memory, the memory blocks and the schedule blocks
// after them (which schedule the buffers its caches create, docs/IR.md); source, none.
std::vector<TextBlock> layer_blocks(const std::vector<TextBlock>& blocks, Layer layer);

// The directive lines of a schedule/memory block's body: trimmed, comments removed, blank lines
// dropped ("split(C, i, 32, io, ii)").
std::vector<std::string> directive_lines(std::string_view block_text);

// One line for the trajectory: the directives `after` adds to and removes from `before`
// ("+vectorize(C, j, 8) -parallel(C, i)"), "reorder directives" when only their order changed,
// "no change" when none did; long lists end in "(+N more)".
std::string directive_change(const std::vector<std::string>& before, const std::vector<std::string>& after);

}  // namespace ekb::agent
