#include "runtime/opencl_launch.h"

#include <algorithm>
#include <cctype>
#include <set>

namespace ekb::runtime::opencl {

namespace {

constexpr std::string_view kMarker = "ekb-launch";

struct Token {
  enum class Kind { Ident, Int, Punct, End } kind = Kind::End;
  std::string text;
  int line = 0, column = 0;
};

// The tokens of one line of the description; `line`/`first_column` place it in the source.
std::vector<Token> tokenize(const std::string& text, int line, int first_column) {
  std::vector<Token> out;
  size_t i = 0;
  auto col = [&](size_t at) { return first_column + static_cast<int>(at); };
  while (i < text.size()) {
    const char c = text[i];
    if (std::isspace(static_cast<unsigned char>(c))) {
      ++i;
      continue;
    }
    Token t;
    t.line = line;
    t.column = col(i);
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      size_t j = i;
      while (j < text.size() && (std::isalnum(static_cast<unsigned char>(text[j])) || text[j] == '_')) ++j;
      t.kind = Token::Kind::Ident;
      t.text = text.substr(i, j - i);
      i = j;
    } else if (std::isdigit(static_cast<unsigned char>(c))) {
      size_t j = i;
      while (j < text.size() && std::isalnum(static_cast<unsigned char>(text[j]))) ++j;
      t.kind = Token::Kind::Int;
      t.text = text.substr(i, j - i);
      i = j;
    } else if (std::string_view("=[](),+-*/%").find(c) != std::string_view::npos) {
      t.kind = Token::Kind::Punct;
      t.text = std::string(1, c);
      ++i;
    } else {
      throw LaunchError(line, col(i), std::string("unexpected character '") + c + "'");
    }
    out.push_back(std::move(t));
  }
  Token end;
  end.line = line;
  end.column = col(text.size());
  out.push_back(end);
  return out;
}

std::string describe(const Token& t) {
  switch (t.kind) {
    case Token::Kind::End: return "the end of the line";
    case Token::Kind::Int: return "number " + t.text;
    default: return "'" + t.text + "'";
  }
}

class LineParser {
 public:
  LineParser(std::vector<Token> tokens, const LaunchNames& names, const std::vector<ScratchBuffer>& scratch)
      : tokens_(std::move(tokens)), names_(names), scratch_(scratch) {}

  const Token& peek() const { return tokens_[pos_]; }
  Token next() { return tokens_[pos_ < tokens_.size() - 1 ? pos_++ : pos_]; }
  bool at_punct(const char* p) const { return peek().kind == Token::Kind::Punct && peek().text == p; }
  bool at_end() const { return peek().kind == Token::Kind::End; }
  [[noreturn]] void fail(const Token& t, const std::string& what) const { throw LaunchError(t.line, t.column, what); }
  void expect(const char* p, const char* context) {
    if (!at_punct(p)) fail(peek(), std::string("expected '") + p + "' " + context + ", found " + describe(peek()));
    next();
  }
  Token identifier(const char* what) {
    if (peek().kind != Token::Kind::Ident) fail(peek(), std::string("expected ") + what + ", found " + describe(peek()));
    return next();
  }

  // expr := term (('+' | '-') term)*
  SizeExpr expression() {
    SizeExpr e = term();
    while (at_punct("+") || at_punct("-")) {
      Token op = next();
      e = binary(op.text == "+" ? SizeExpr::Op::Add : SizeExpr::Op::Sub, std::move(e), term(), op);
    }
    return e;
  }

  std::vector<SizeExpr> size_list(const std::string& key) {
    const Token open = peek();
    expect("[", ("after " + key + "=").c_str());
    std::vector<SizeExpr> list;
    if (!at_punct("]")) {
      list.push_back(expression());
      while (at_punct(",")) {
        next();
        list.push_back(expression());
      }
    }
    expect("]", ("to close " + key + "=[...]").c_str());
    if (list.empty() || list.size() > 3) fail(open, key + " needs 1 to 3 sizes (one per dimension)");
    return list;
  }

  std::vector<LaunchArg> argument_list() {
    expect("[", "after args=");
    std::vector<LaunchArg> args;
    if (!at_punct("]")) {
      args.push_back(argument());
      while (at_punct(",")) {
        next();
        args.push_back(argument());
      }
    }
    expect("]", "to close args=[...]");
    return args;
  }

 private:
  static SizeExpr binary(SizeExpr::Op op, SizeExpr a, SizeExpr b, const Token& at) {
    SizeExpr e;
    e.op = op;
    e.line = at.line;
    e.column = at.column;
    e.args.push_back(std::move(a));
    e.args.push_back(std::move(b));
    return e;
  }

  // term := unary (('*' | '/' | '%') unary)*
  SizeExpr term() {
    SizeExpr e = unary();
    while (at_punct("*") || at_punct("/") || at_punct("%")) {
      Token op = next();
      SizeExpr::Op o = op.text == "*" ? SizeExpr::Op::Mul : op.text == "/" ? SizeExpr::Op::Div : SizeExpr::Op::Mod;
      e = binary(o, std::move(e), unary(), op);
    }
    return e;
  }

  // unary := '-' unary | primary
  SizeExpr unary() {
    if (at_punct("-")) {
      Token op = next();
      SizeExpr e;
      e.op = SizeExpr::Op::Negate;
      e.line = op.line;
      e.column = op.column;
      e.args.push_back(unary());
      return e;
    }
    return primary();
  }

  // primary := INT | PARAM | ('min' | 'max') '(' expr ',' expr ')' | '(' expr ')'
  SizeExpr primary() {
    Token t = peek();
    SizeExpr e;
    e.line = t.line;
    e.column = t.column;
    if (t.kind == Token::Kind::Int) {
      next();
      e.op = SizeExpr::Op::Literal;
      size_t used = 0;
      try {
        e.value = std::stoll(t.text, &used, 10);
      } catch (const std::exception&) {
        fail(t, "the number " + t.text + " does not fit in 64 bits");
      }
      if (used != t.text.size()) fail(t, "'" + t.text + "' is not a decimal integer");
      return e;
    }
    if (t.kind == Token::Kind::Ident) {
      next();
      if ((t.text == "min" || t.text == "max") && at_punct("(")) {
        next();
        SizeExpr a = expression();
        expect(",", ("between the operands of " + t.text + "(a, b)").c_str());
        SizeExpr b = expression();
        expect(")", ("to close " + t.text + "(a, b)").c_str());
        return binary(t.text == "min" ? SizeExpr::Op::Min : SizeExpr::Op::Max, std::move(a), std::move(b), t);
      }
      auto it = std::find(names_.params.begin(), names_.params.end(), t.text);
      if (it == names_.params.end()) {
        bool tensor = std::find(names_.tensors.begin(), names_.tensors.end(), t.text) != names_.tensors.end();
        fail(t, tensor ? "'" + t.text + "' is a tensor; sizes are expressions of the parameters"
                       : "unknown name '" + t.text + "' in a size (the parameters are: " + param_list() + ")");
      }
      e.op = SizeExpr::Op::Param;
      e.param = static_cast<int>(it - names_.params.begin());
      return e;
    }
    if (at_punct("(")) {
      next();
      SizeExpr inner = expression();
      expect(")", "to close '('");
      return inner;
    }
    fail(t, "expected a size (a number, a parameter, min/max or '('), found " + describe(t));
  }

  LaunchArg argument() {
    Token t = identifier("a tensor, parameter or scratch name");
    LaunchArg a;
    a.name = t.text;
    auto find = [&](const std::vector<std::string>& v) {
      auto it = std::find(v.begin(), v.end(), t.text);
      return it == v.end() ? -1 : static_cast<int>(it - v.begin());
    };
    if (int i = find(names_.tensors); i >= 0) {
      a.kind = LaunchArg::Kind::Tensor;
      a.index = i;
    } else if (int j = find(names_.params); j >= 0) {
      a.kind = LaunchArg::Kind::Param;
      a.index = j;
    } else {
      auto it = std::find_if(scratch_.begin(), scratch_.end(), [&](const ScratchBuffer& s) { return s.name == t.text; });
      if (it == scratch_.end())
        fail(t, "unknown name '" + t.text + "' in args (the workload's tensors and parameters are: " + all_names() +
                    "; scratch buffers must be declared by a scratch line before use)");
      a.kind = LaunchArg::Kind::Scratch;
      a.index = static_cast<int>(it - scratch_.begin());
    }
    return a;
  }

  std::string param_list() const {
    std::string s;
    for (const std::string& p : names_.params) s += (s.empty() ? "" : ", ") + p;
    return s.empty() ? "none" : s;
  }
  std::string all_names() const {
    std::string s;
    for (const std::string& n : names_.tensors) s += (s.empty() ? "" : ", ") + n;
    for (const std::string& n : names_.params) s += (s.empty() ? "" : ", ") + n;
    return s;
  }

  std::vector<Token> tokens_;
  size_t pos_ = 0;
  const LaunchNames& names_;
  const std::vector<ScratchBuffer>& scratch_;
};

// Line and column (1-based) of byte `at` of `text`.
std::pair<int, int> position(const std::string& text, size_t at) {
  int line = 1;
  size_t line_start = 0;
  for (size_t i = 0; i < at && i < text.size(); ++i)
    if (text[i] == '\n') {
      ++line;
      line_start = i + 1;
    }
  return {line, static_cast<int>(at - line_start) + 1};
}

// Where the description's text starts (just after the marker), or npos.
size_t find_marker(const std::string& source, size_t from) {
  for (size_t open = source.find("/*", from); open != std::string::npos; open = source.find("/*", open + 2)) {
    size_t p = open + 2;
    while (p < source.size() && (source[p] == ' ' || source[p] == '\t')) ++p;
    if (source.compare(p, kMarker.size(), kMarker) == 0) return p + kMarker.size();
  }
  return std::string::npos;
}

bool is_valid_identifier(const std::string& s) {
  if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_')) return false;
  return std::all_of(s.begin(), s.end(), [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
}

}  // namespace

LaunchError::LaunchError(int line, int column, const std::string& what)
    : std::runtime_error("launch description, line " + std::to_string(line) + ", column " + std::to_string(column) +
                         ": " + what),
      line_(line),
      column_(column) {}

LaunchDescription parse_launch_description(const std::string& source, const LaunchNames& names) {
  const size_t begin = find_marker(source, 0);
  if (begin == std::string::npos)
    throw LaunchError(1, 1,
                      "no launch description: an OpenCL solution ends with a /* ekb-launch ... */ comment listing its "
                      "kernel launches (docs/ABI.md)");
  if (size_t again = find_marker(source, begin); again != std::string::npos) {
    auto [l, c] = position(source, again);
    throw LaunchError(l, c, "a second ekb-launch comment (a solution has exactly one)");
  }
  const size_t end = source.find("*/", begin);
  if (end == std::string::npos) {
    auto [l, c] = position(source, begin);
    throw LaunchError(l, c, "the ekb-launch comment is not closed with */");
  }
  {  // Nothing may follow the marker on its own line: it is easily a typo ("ekb-launchx").
    size_t eol = source.find('\n', begin);
    std::string rest = source.substr(begin, std::min(eol, end) - begin);
    if (rest.find_first_not_of(" \t\r") != std::string::npos) {
      auto [l, c] = position(source, begin);
      throw LaunchError(l, c, "unexpected text after 'ekb-launch' (launches go on the following lines)");
    }
  }

  LaunchDescription d;
  std::set<std::string> names_in_use(names.tensors.begin(), names.tensors.end());
  names_in_use.insert(names.params.begin(), names.params.end());
  for (size_t at = source.find('\n', begin); at != std::string::npos && at < end;) {
    const size_t line_begin = at + 1, newline = source.find('\n', line_begin);
    const size_t line_end = std::min(newline, end);
    at = newline;
    const std::string text = source.substr(line_begin, line_end - line_begin);
    auto [line, column] = position(source, line_begin);
    const size_t first = text.find_first_not_of(" \t\r");
    if (first != std::string::npos && text[first] != '#') {
      LineParser p(tokenize(text, line, column), names, d.scratch);
      Token keyword = p.identifier("'kernel' or 'scratch'");
      if (keyword.text == "scratch") {
        ScratchBuffer s;
        s.line = line;
        Token n = p.identifier("the scratch buffer's name");
        if (names_in_use.count(n.text)) p.fail(n, "'" + n.text + "' is already a tensor, parameter or scratch name");
        names_in_use.insert(n.text);
        s.name = n.text;
        s.bytes = p.expression();
        if (!p.at_end()) p.fail(p.peek(), "unexpected " + describe(p.peek()) + " after the scratch size");
        d.scratch.push_back(std::move(s));
      } else if (keyword.text == "kernel") {
        KernelLaunch k;
        k.line = line;
        k.kernel = p.identifier("the kernel's name").text;
        std::set<std::string> seen;
        while (!p.at_end()) {
          Token key = p.identifier("global=, local= or args=");
          if (key.text != "global" && key.text != "local" && key.text != "args")
            p.fail(key, "unknown key '" + key.text + "' (a kernel line has global=[...], local=[...], args=[...])");
          if (!seen.insert(key.text).second) p.fail(key, key.text + "= appears twice");
          p.expect("=", ("after " + key.text).c_str());
          if (key.text == "global") k.global = p.size_list("global");
          else if (key.text == "local") k.local = p.size_list("local");
          else k.args = p.argument_list();
        }
        if (!seen.count("global")) throw LaunchError(line, column, "kernel " + k.kernel + " has no global=[...] size");
        if (!k.local.empty() && k.local.size() != k.global.size())
          throw LaunchError(line, column, "kernel " + k.kernel + ": local=[...] has " + std::to_string(k.local.size()) +
                                              " dimensions, global=[...] " + std::to_string(k.global.size()));
        d.launches.push_back(std::move(k));
      } else {
        p.fail(keyword, "expected 'kernel' or 'scratch' at the start of a line, found '" + keyword.text + "'");
      }
    }
  }
  if (d.launches.empty()) {
    auto [l, c] = position(source, begin);
    throw LaunchError(l, c, "the launch description launches no kernel (add a 'kernel NAME global=[...] args=[...]' line)");
  }
  for (const KernelLaunch& k : d.launches)
    if (!is_valid_identifier(k.kernel)) throw LaunchError(k.line, 1, "'" + k.kernel + "' is not a kernel name");
  return d;
}

int64_t evaluate(const SizeExpr& e, const std::vector<int64_t>& params) {
  auto fail = [&](const std::string& what) -> int64_t { throw LaunchError(e.line, e.column, what); };
  auto arg = [&](size_t i) { return evaluate(e.args[i], params); };
  int64_t r = 0;
  switch (e.op) {
    case SizeExpr::Op::Literal:
      return e.value;
    case SizeExpr::Op::Param:
      if (e.param < 0 || static_cast<size_t>(e.param) >= params.size()) return fail("no value for a parameter");
      return params[static_cast<size_t>(e.param)];
    case SizeExpr::Op::Negate:
      if (__builtin_sub_overflow(int64_t{0}, arg(0), &r)) return fail("overflow");
      return r;
    case SizeExpr::Op::Add:
      if (__builtin_add_overflow(arg(0), arg(1), &r)) return fail("overflow in +");
      return r;
    case SizeExpr::Op::Sub:
      if (__builtin_sub_overflow(arg(0), arg(1), &r)) return fail("overflow in -");
      return r;
    case SizeExpr::Op::Mul:
      if (__builtin_mul_overflow(arg(0), arg(1), &r)) return fail("overflow in *");
      return r;
    case SizeExpr::Op::Div:
    case SizeExpr::Op::Mod: {
      const int64_t a = arg(0), b = arg(1);
      if (b == 0) return fail("division by zero");
      if (a == INT64_MIN && b == -1) return fail("overflow in /");
      return e.op == SizeExpr::Op::Div ? a / b : a % b;
    }
    case SizeExpr::Op::Min:
      return std::min(arg(0), arg(1));
    case SizeExpr::Op::Max:
      return std::max(arg(0), arg(1));
  }
  return fail("unknown operation");
}

ResolvedLaunch resolve(const KernelLaunch& launch, const std::vector<int64_t>& params) {
  ResolvedLaunch r;
  auto fail = [&](const std::string& what) { throw LaunchError(launch.line, 1, "kernel " + launch.kernel + ": " + what); };
  for (size_t d = 0; d < launch.global.size(); ++d) {
    const int64_t g = evaluate(launch.global[d], params);
    if (g < 0) fail("global size " + std::to_string(g) + " is negative");
    if (g == 0) r.empty = true;
    r.global.push_back(static_cast<size_t>(g));
  }
  for (size_t d = 0; d < launch.local.size(); ++d) {
    const int64_t l = evaluate(launch.local[d], params);
    if (l <= 0) fail("local size " + std::to_string(l) + " is not positive");
    if (r.global[d] % static_cast<size_t>(l) != 0)
      fail("global size " + std::to_string(r.global[d]) + " is not a multiple of the local size " + std::to_string(l) +
           " (dimension " + std::to_string(d) + ", OpenCL 1.2)");
    r.local.push_back(static_cast<size_t>(l));
  }
  return r;
}

}  // namespace ekb::runtime::opencl
