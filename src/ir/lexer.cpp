#include "ir/lexer.h"

#include <cctype>
#include <charconv>
#include <cstdio>

namespace ekb::ir {

namespace {

constexpr std::string_view kTwoCharPuncts[] = {"..", "==", "!=", "<=", ">=", "&&", "||", "<<", ">>"};
constexpr std::string_view kOneCharPuncts = "{}()[],:=+-*/%<>!&|^.";

bool is_ident_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool is_ident_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }
bool is_digit(char c) { return c >= '0' && c <= '9'; }

class Lexer {
 public:
  Lexer(std::string_view text, const std::string& file) : s_(text), file_(file) {}

  std::vector<Token> run() {
    std::vector<Token> out;
    for (;;) {
      skip_space_and_comments();
      Token t;
      t.loc = {line_, col_};
      if (pos_ >= s_.size()) {
        out.push_back(t);
        return out;
      }
      char c = s_[pos_];
      if (is_ident_start(c)) {
        size_t start = pos_;
        while (pos_ < s_.size() && is_ident_char(s_[pos_])) advance();
        t.kind = TokenKind::Ident;
        t.text = std::string(s_.substr(start, pos_ - start));
      } else if (is_digit(c)) {
        lex_number(t);
      } else if (c == '"') {
        lex_string(t);
      } else {
        lex_punct(t);
      }
      out.push_back(std::move(t));
    }
  }

 private:
  [[noreturn]] void fail(SourceLoc loc, std::string msg, std::string hint = {}) {
    throw ParseError(Diagnostic{file_, loc, std::move(msg), std::move(hint)});
  }

  void advance() {
    if (s_[pos_] == '\n') {
      ++line_;
      col_ = 1;
    } else {
      ++col_;
    }
    ++pos_;
  }

  void skip_space_and_comments() {
    while (pos_ < s_.size()) {
      char c = s_[pos_];
      if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
        advance();
      } else if (c == '#') {
        while (pos_ < s_.size() && s_[pos_] != '\n') advance();
      } else {
        break;
      }
    }
  }

  void lex_number(Token& t) {
    size_t start = pos_;
    while (pos_ < s_.size() && is_digit(s_[pos_])) advance();
    bool is_float = false;
    // "0..N" is a range, not the float "0.": a '.' makes a float only when a digit follows.
    if (pos_ + 1 < s_.size() && s_[pos_] == '.' && is_digit(s_[pos_ + 1])) {
      is_float = true;
      advance();
      while (pos_ < s_.size() && is_digit(s_[pos_])) advance();
    }
    if (pos_ < s_.size() && (s_[pos_] == 'e' || s_[pos_] == 'E')) {
      size_t save_pos = pos_;
      int save_col = col_;
      advance();
      if (pos_ < s_.size() && (s_[pos_] == '+' || s_[pos_] == '-')) advance();
      if (pos_ < s_.size() && is_digit(s_[pos_])) {
        is_float = true;
        while (pos_ < s_.size() && is_digit(s_[pos_])) advance();
      } else {
        pos_ = save_pos;
        col_ = save_col;
      }
    }
    if (pos_ < s_.size() && is_ident_start(s_[pos_]))
      fail({line_, col_}, "malformed number: a letter follows the digits",
           "separate the number from the name with an operator or a space");
    std::string_view text = s_.substr(start, pos_ - start);
    t.text = std::string(text);
    if (is_float) {
      t.kind = TokenKind::Float;
      // strtod is locale-sensitive in theory; .ekb files are written with '.', as is the C locale.
      t.float_value = std::strtod(t.text.c_str(), nullptr);
    } else {
      t.kind = TokenKind::Int;
      auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), t.int_value);
      if (ec != std::errc() || ptr != text.data() + text.size())
        fail(t.loc, "integer literal '" + t.text + "' does not fit in 64 bits");
    }
  }

  void lex_string(Token& t) {
    advance();  // opening quote
    std::string value;
    for (;;) {
      if (pos_ >= s_.size() || s_[pos_] == '\n')
        fail(t.loc, "unterminated string literal", "close it with '\"' on the same line");
      char c = s_[pos_];
      if (c == '"') {
        advance();
        break;
      }
      if (c == '\\') {
        advance();
        if (pos_ >= s_.size()) fail(t.loc, "unterminated string literal");
        char e = s_[pos_];
        if (e == '"' || e == '\\') value += e;
        else if (e == 'n') value += '\n';
        else fail({line_, col_}, std::string("unknown escape '\\") + e + "' in string",
                  "only \\\" \\\\ and \\n are escapes");
        advance();
        continue;
      }
      if (static_cast<unsigned char>(c) < 0x20 && c != '\t')
        fail({line_, col_}, "control character in string literal");
      value += c;
      advance();
    }
    t.kind = TokenKind::String;
    t.text = std::move(value);
  }

  void lex_punct(Token& t) {
    if (pos_ + 1 < s_.size()) {
      std::string_view two = s_.substr(pos_, 2);
      for (auto p : kTwoCharPuncts) {
        if (two == p) {
          t.kind = TokenKind::Punct;
          t.text = std::string(p);
          advance();
          advance();
          return;
        }
      }
    }
    char c = s_[pos_];
    if (kOneCharPuncts.find(c) != std::string_view::npos) {
      t.kind = TokenKind::Punct;
      t.text = std::string(1, c);
      advance();
      return;
    }
    unsigned char u = static_cast<unsigned char>(c);
    char buf[8];
    if (u >= 0x20 && u < 0x7f) std::snprintf(buf, sizeof buf, "'%c'", c);
    else std::snprintf(buf, sizeof buf, "0x%02x", u);
    fail(t.loc, std::string("unexpected character ") + buf,
         u >= 0x7f || u < 0x20 ? "is this a text file? .ekb files are ASCII" : "");
  }

  std::string_view s_;
  const std::string& file_;
  size_t pos_ = 0;
  int line_ = 1, col_ = 1;
};

}  // namespace

std::vector<Token> tokenize(std::string_view text, const std::string& file) {
  return Lexer(text, file).run();
}

std::string describe(const Token& t) {
  switch (t.kind) {
    case TokenKind::Ident: return "'" + t.text + "'";
    case TokenKind::Int:
    case TokenKind::Float: return "number " + t.text;
    case TokenKind::String: return "a string";
    case TokenKind::Punct: return "'" + t.text + "'";
    case TokenKind::End: return "end of file";
  }
  return "?";
}

}  // namespace ekb::ir
