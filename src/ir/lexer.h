// Tokenizer for .ekb files. Keywords are ordinary identifiers; the parser decides by context.
#pragma once
#include <string>
#include <string_view>
#include <vector>

#include "ir/diagnostics.h"

namespace ekb::ir {

enum class TokenKind : uint8_t { Ident, Int, Float, String, Punct, End };

struct Token {
  TokenKind kind = TokenKind::End;
  std::string text;  // identifier, punctuation, or the decoded string literal
  int64_t int_value = 0;
  double float_value = 0;
  SourceLoc loc;
};

// Tokenizes the whole input; throws ParseError on a malformed token (bad byte, unterminated
// string, integer overflow).
std::vector<Token> tokenize(std::string_view text, const std::string& file);

std::string describe(const Token& t);  // for messages: "identifier 'x'", "'{'", "end of file"

}  // namespace ekb::ir
