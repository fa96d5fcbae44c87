// Helpers for the verifier tests: run verify_module on text, find where a snippet sits in the
// text, and assert that a diagnostic with a given message fragment sits exactly there.
#pragma once
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "ir/diagnostics.h"
#include "ir/instance.h"
#include "ir/parser.h"

namespace ekb::ir::vtest {

struct Checked {
  bool ok = false;
  std::vector<Diagnostic> items;
  std::string text;  // formatted, for failure messages
};

inline Checked check(const std::string& src) {
  Module m = parse_module(src, "t.ekb");
  Diagnostics d("t.ekb");
  Checked c;
  c.ok = verify_module(m, d);
  c.items = d.items();
  c.text = d.format();
  return c;
}

// A pattern nn.t with level and source, then `body` (declarations and statements) from line 4,
// then the workloads.
inline std::string pat(const std::string& body, const std::string& workloads = "workload w { N = 8 }") {
  return "pattern nn.t {\n  level operator\n  source \"test\"\n" + body + "\n}\n" + workloads + "\n";
}

// 1-based line and column of byte offset `pos` in `src`.
inline SourceLoc loc_of(const std::string& src, size_t pos) {
  SourceLoc loc{1, 1};
  for (size_t i = 0; i < pos && i < src.size(); ++i) {
    if (src[i] == '\n') {
      ++loc.line;
      loc.col = 1;
    } else {
      ++loc.col;
    }
  }
  return loc;
}

// Where the nth occurrence of `needle` at or after byte `from` starts; {0, 0} when absent.
inline SourceLoc at(const std::string& src, const std::string& needle, int nth = 0, size_t from = 0) {
  size_t pos = src.find(needle, from);
  while (pos != std::string::npos && nth-- > 0) pos = src.find(needle, pos + 1);
  if (pos == std::string::npos) return {0, 0};
  return loc_of(src, pos);
}

inline ::testing::AssertionResult has_error(const Checked& c, SourceLoc loc, const std::string& msg,
                                            const std::string& hint = "") {
  for (const auto& d : c.items)
    if (d.loc.line == loc.line && d.loc.col == loc.col && d.message.find(msg) != std::string::npos &&
        d.hint.find(hint) != std::string::npos)
      return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "no error at " << loc.line << ":" << loc.col << " containing '"
                                       << msg << "'" << (hint.empty() ? "" : " with hint '" + hint + "'")
                                       << "; got:\n" << c.text;
}

// Exactly one diagnostic, at loc, containing msg.
inline ::testing::AssertionResult only_error(const Checked& c, SourceLoc loc, const std::string& msg,
                                             const std::string& hint = "") {
  if (c.items.size() != 1)
    return ::testing::AssertionFailure() << "expected exactly one error, got " << c.items.size() << ":\n"
                                         << c.text;
  return has_error(c, loc, msg, hint);
}

}  // namespace ekb::ir::vtest
