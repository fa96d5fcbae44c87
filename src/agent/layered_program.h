// A candidate as LEKA holds it: the text of each layer apart, so that a proposal replaces one
// layer's text and the candidate file is their concatenation (docs/AGENT.md, "Programs").
#pragma once
#include <string>

#include "agent/policy.h"

namespace ekb::agent {

struct LayeredProgram {
  std::string compute;   // the pattern block
  std::string schedule;  // `schedule TARGET { ... }` blocks, or empty
  // `memory TARGET { ... }` blocks, or empty; may end with a schedule block for the buffers its
  // caches create (they exist only after the memory layer, docs/IR.md)
  std::string memory;
  std::string source;    // a kept Source proposal: the candidate is this source, not the IR

  // The .ekb file: compute, then schedule, then memory.
  std::string ir_text() const;
  // The text a proposal of `layer` replaces.
  const std::string& layer_text(Layer layer) const;
  // This program with `layer`'s text replaced.
  LayeredProgram with(Layer layer, std::string text) const;
};

// A unified diff of two texts, line by line: "--- before" / "+++ after", then hunks of the changed
// lines with `context` unchanged lines around them; empty when they are equal.
std::string unified_diff(const std::string& before, const std::string& after, int context = 3);

}  // namespace ekb::agent
