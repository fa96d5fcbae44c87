// The solution in a model's reply: the fenced code block for the requested backend, chosen from
// replies with prose around it, several blocks (a signature echoed, a test harness, another
// language) or a final block cut short. A reply with no usable block is reported, not guessed at.
#pragma once
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ir/target.h"

namespace ekb::llm {

struct CodeBlock {
  std::string language;  // the fence's info word, lower-cased ("" when untagged)
  std::string code;
  bool closed = true;  // false: the reply ended inside the block (e.g. at max_tokens)
};

// Every fenced block (``` or ~~~, CommonMark-style, indented at most 3 spaces) in order.
std::vector<CodeBlock> fenced_blocks(std::string_view text);

struct ExtractedCode {
  std::string code;
  std::string extension;  // the solution file's: ".c" or ".cpp" (cpu), ".cu" (cuda), ".cl" (opencl)
  bool complete = true;   // false when the block was cut short
};

struct Extraction {
  std::optional<ExtractedCode> code;
  std::string no_code_reason;  // when there is no code: why, for the sample's record
};

// The best block for `target`: blocks tagged for another language are never taken; among the
// rest, one that defines the entry point (ekb_main; for opencl a kernel) wins, then one tagged for
// the backend, then a closed one, then the longest. A reply without fences counts as one untagged
// block when it defines the entry point itself.
Extraction extract_code(std::string_view reply, ir::Target target);

}  // namespace ekb::llm
