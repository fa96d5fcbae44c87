// Diagnostics with file:line:col, a one-line explanation and an optional hint.
#pragma once
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "ir/ast.h"

namespace ekb::ir {

struct Diagnostic {
  std::string file;
  SourceLoc loc;
  std::string message;  // one line, no trailing period
  std::string hint;     // may be empty

  // "file:line:col: error: message" plus "  hint: ..." on a second line when present.
  std::string format() const;
};

// Thrown by the parser on its first error (it does not attempt recovery).
class ParseError : public std::runtime_error {
 public:
  explicit ParseError(Diagnostic d) : std::runtime_error(d.format()), diag_(std::move(d)) {}
  const Diagnostic& diagnostic() const { return diag_; }

 private:
  Diagnostic diag_;
};

class Diagnostics {
 public:
  explicit Diagnostics(std::string file = {}) : file_(std::move(file)) {}
  void error(SourceLoc loc, std::string message, std::string hint = {});
  bool has_errors() const { return !items_.empty(); }
  const std::vector<Diagnostic>& items() const { return items_; }
  const std::string& file() const { return file_; }
  std::string format() const;  // all diagnostics, one (or two) lines each

 private:
  std::string file_;
  std::vector<Diagnostic> items_;
};

// The candidate closest to `name` by edit distance, or "" when none is close enough to suggest.
std::string nearest_name(std::string_view name, const std::vector<std::string>& candidates);
// "did you mean 'x'?" or "" — the usual hint for an unknown name.
std::string did_you_mean(std::string_view name, const std::vector<std::string>& candidates);

}  // namespace ekb::ir
