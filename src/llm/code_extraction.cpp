#include "llm/code_extraction.h"

#include <algorithm>
#include <cctype>
#include <regex>
#include <set>
#include <tuple>

#include "codegen/target.h"  // code_fence_language
#include "eval/solution_set.h"

namespace ekb::llm {

namespace {

using ir::Target;

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

// A fence line: up to 3 spaces, then 3+ backticks or tildes; sets `fence` to that run.
bool fence_line(std::string_view line, std::string& fence, std::string& info) {
  size_t i = 0;
  while (i < line.size() && i < 3 && line[i] == ' ') ++i;
  if (i >= line.size() || (line[i] != '`' && line[i] != '~')) return false;
  const char c = line[i];
  size_t j = i;
  while (j < line.size() && line[j] == c) ++j;
  if (j - i < 3) return false;
  fence.assign(j - i, c);
  info = std::string(line.substr(j));
  if (c == '`' && info.find('`') != std::string::npos) return false;  // inline code, not a fence
  return true;
}

// The language word of an info string: "c", "cpp {.numberLines}", "{.cuda}", "c title=x.c" -> c, cpp, cuda, c.
std::string info_language(std::string info) {
  size_t start = info.find_first_not_of(" \t{.");
  if (start == std::string::npos) return "";
  size_t end = info.find_first_of(" \t}", start);
  return lower(info.substr(start, end == std::string::npos ? std::string::npos : end - start));
}

bool tagged_for(const std::string& language, Target target) {
  static const std::set<std::string> cpu = {"c", "cpp", "c++", "cxx", "cc", "h", "hpp"};
  static const std::set<std::string> cuda = {"cuda", "cu", "cuh", "cpp", "c++", "cxx"};
  static const std::set<std::string> opencl = {"opencl", "cl", "c", "opencl-c"};
  switch (target) {
    case Target::Cpu: return cpu.count(language) > 0;
    case Target::Cuda: return cuda.count(language) > 0;
    case Target::OpenCL: return opencl.count(language) > 0;
  }
  return false;
}

bool defines_entry(const std::string& code, Target target) {
  static const std::regex host_entry(R"(\bekb_main\s*\([^;{}]*\)\s*\{)");
  static const std::regex kernel(R"((__kernel|\bkernel)\s+void\s+\w+\s*\()");
  return std::regex_search(code, target == Target::OpenCL ? kernel : host_entry);
}

bool mentions_entry(const std::string& code, Target target) {
  return code.find(target == Target::OpenCL ? "kernel" : "ekb_main") != std::string::npos;
}

bool looks_like_cpp(const std::string& language, const std::string& code) {
  if (language == "cpp" || language == "c++" || language == "cxx" || language == "cc" || language == "hpp") return true;
  if (!language.empty() && language != "c") return false;
  static const std::regex cpp_only(
      R"(extern\s+"C"|\bstd::|\btemplate\s*<|\bnamespace\s+\w|#include\s*<(c[a-z]+|vector|array|algorithm|numeric|limits|thread|atomic|memory)>)");
  return std::regex_search(code, cpp_only);
}

std::string extension_for(Target target, const CodeBlock& b) {
  return eval::source_solution_extension(target, target == Target::Cpu && looks_like_cpp(b.language, b.code));
}

}  // namespace

std::vector<CodeBlock> fenced_blocks(std::string_view text) {
  std::vector<CodeBlock> blocks;
  std::string open_fence;  // empty: outside a block
  CodeBlock current;
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t eol = text.find('\n', pos);
    std::string_view line = text.substr(pos, eol == std::string_view::npos ? std::string_view::npos : eol - pos);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    std::string fence, info;
    const bool is_fence = fence_line(line, fence, info);
    if (open_fence.empty()) {
      if (is_fence) {
        open_fence = fence;
        current = CodeBlock{info_language(info), "", true};
      }
    } else if (is_fence && fence[0] == open_fence[0] && fence.size() >= open_fence.size() &&
               info.find_first_not_of(" \t") == std::string::npos) {
      blocks.push_back(std::move(current));
      open_fence.clear();
    } else {
      current.code.append(line).push_back('\n');
    }
    if (eol == std::string_view::npos) break;
    pos = eol + 1;
  }
  if (!open_fence.empty()) {
    current.closed = false;
    blocks.push_back(std::move(current));
  }
  return blocks;
}

Extraction extract_code(std::string_view reply, Target target) {
  std::vector<CodeBlock> blocks = fenced_blocks(reply);
  if (blocks.empty() && defines_entry(std::string(reply), target)) blocks.push_back({"", std::string(reply), true});

  const CodeBlock* best = nullptr;
  auto rank = [&](const CodeBlock& b) {
    return std::make_tuple(defines_entry(b.code, target), mentions_entry(b.code, target), !b.language.empty(),
                           b.closed, b.code.size());
  };
  std::vector<std::string> other_languages;
  for (const CodeBlock& b : blocks) {
    if (!b.language.empty() && !tagged_for(b.language, target)) {
      other_languages.push_back(b.language);
      continue;
    }
    if (b.code.find_first_not_of(" \t\r\n") == std::string::npos) continue;
    if (!best || rank(b) >= rank(*best)) best = &b;  // >=: of equals, the later block (a revised answer)
  }
  Extraction e;
  if (best) {
    e.code = ExtractedCode{best->code, extension_for(target, *best), best->closed};
    return e;
  }
  const std::string want(codegen::code_fence_language(target));
  if (blocks.empty())
    e.no_code_reason = reply.find_first_not_of(" \t\r\n") == std::string_view::npos
                           ? "the reply is empty"
                           : "the reply has no code block (```" + want + ")";
  else {
    std::string langs;
    for (const auto& l : other_languages) langs += (langs.empty() ? "" : ", ") + l;
    e.no_code_reason = "the reply has no ```" + want + " code block" + (langs.empty() ? "" : " (only: " + langs + ")");
  }
  return e;
}

}  // namespace ekb::llm
