#include "ir/parser.h"

#include <array>
#include <cmath>
#include <limits>

#include "ir/lexer.h"

namespace ekb::ir {

namespace {

constexpr std::array<std::string_view, 35> kReserved{
    "pattern", "workload", "schedule", "memory", "level",  "source", "summary",
    "types",   "params",   "let",      "input",  "output", "temp",   "for",
    "in",      "cast",     "sat",      "select", "pad",    "edge",   "mirror",
    "sum",     "prod",     "max",      "min",    "argmax", "argmin", "true",
    "false",   "inf",      "nan",      "spd",    "micro",  "mobile", "heldout"};

constexpr int kMaxDepth = 200;  // nesting limit: deeper input is rejected, never a stack overflow

struct BinaryInfo {
  std::string_view text;
  BinaryOp op;
  int prec;
};
constexpr std::array<BinaryInfo, 18> kBinaryOps{{
    {"||", BinaryOp::Or, 1},     {"&&", BinaryOp::And, 2},    {"==", BinaryOp::Eq, 3},
    {"!=", BinaryOp::Ne, 3},     {"<", BinaryOp::Lt, 3},      {"<=", BinaryOp::Le, 3},
    {">", BinaryOp::Gt, 3},      {">=", BinaryOp::Ge, 3},     {"|", BinaryOp::BitOr, 4},
    {"^", BinaryOp::BitXor, 5},  {"&", BinaryOp::BitAnd, 6},  {"<<", BinaryOp::Shl, 7},
    {">>", BinaryOp::Shr, 7},    {"+", BinaryOp::Add, 8},     {"-", BinaryOp::Sub, 8},
    {"*", BinaryOp::Mul, 9},     {"/", BinaryOp::Div, 9},     {"%", BinaryOp::Mod, 9},
}};

class Parser {
 public:
  Parser(std::string_view text, const std::string& file) : file_(file) {
    toks_ = tokenize(text, file);
  }

  Module run() {
    Module m;
    m.file = file_;
    if (!is_ident("pattern"))
      fail(peek(), "expected 'pattern' at the start of the file, found " + describe(peek()),
           "a .ekb file starts with `pattern domain.name { ... }`");
    m.pattern = parse_pattern();
    while (peek().kind != TokenKind::End) {
      if (is_ident("workload")) {
        m.workloads.push_back(parse_workload());
      } else if (is_ident("schedule") || is_ident("memory")) {
        m.layers.push_back(parse_layer());
      } else if (is_ident("pattern")) {
        fail(peek(), "a file holds exactly one pattern", "move the second pattern to its own file");
      } else {
        fail(peek(), "expected 'workload', 'schedule' or 'memory', found " + describe(peek()));
      }
    }
    return m;
  }

 private:
  // ---- token helpers ----
  const Token& peek(size_t ahead = 0) const {
    size_t i = std::min(pos_ + ahead, toks_.size() - 1);
    return toks_[i];
  }
  const Token& next() {
    const Token& t = toks_[pos_];
    if (pos_ + 1 < toks_.size()) ++pos_;
    return t;
  }
  bool is_punct(std::string_view p, size_t ahead = 0) const {
    const Token& t = peek(ahead);
    return t.kind == TokenKind::Punct && t.text == p;
  }
  bool is_ident(std::string_view w, size_t ahead = 0) const {
    const Token& t = peek(ahead);
    return t.kind == TokenKind::Ident && t.text == w;
  }
  bool accept_punct(std::string_view p) {
    if (!is_punct(p)) return false;
    next();
    return true;
  }
  [[noreturn]] void fail(const Token& t, std::string msg, std::string hint = {}) {
    throw ParseError(Diagnostic{file_, t.loc, std::move(msg), std::move(hint)});
  }
  const Token& expect_punct(std::string_view p, std::string_view context) {
    if (!is_punct(p))
      fail(peek(), "expected '" + std::string(p) + "' " + std::string(context) + ", found " +
                       describe(peek()));
    return next();
  }
  void expect_keyword(std::string_view w) {
    if (!is_ident(w)) fail(peek(), "expected '" + std::string(w) + "', found " + describe(peek()));
    next();
  }
  // A user-chosen name: an identifier that is not a reserved word.
  Ident expect_name(std::string_view what) {
    const Token& t = peek();
    if (t.kind != TokenKind::Ident) fail(t, "expected " + std::string(what) + ", found " + describe(t));
    if (is_reserved_word(t.text))
      fail(t, "'" + t.text + "' is a reserved word and cannot be used as " + std::string(what),
           "choose another name, e.g. '" + t.text + "_'");
    next();
    return Ident{t.text, t.loc};
  }
  std::string expect_string(std::string_view what) {
    if (peek().kind != TokenKind::String)
      fail(peek(), "expected a string after '" + std::string(what) + "', found " + describe(peek()),
           "write it in double quotes");
    return next().text;
  }

  struct DepthGuard {
    Parser& p;
    explicit DepthGuard(Parser& parser) : p(parser) {
      if (++p.depth_ > kMaxDepth) p.fail(p.peek(), "nesting is too deep (more than 200 levels)");
    }
    ~DepthGuard() { --p.depth_; }
  };

  // ---- pattern ----
  Pattern parse_pattern() {
    Pattern p;
    p.loc = next().loc;  // 'pattern'
    p.name = parse_pattern_name();
    expect_punct("{", "to open the pattern body");
    bool seen_stmt = false;
    while (!is_punct("}")) {
      const Token& t = peek();
      if (t.kind == TokenKind::End) fail(t, "unexpected end of file inside pattern '" + p.name + "'",
                                         "a '}' is missing");
      if (t.kind == TokenKind::Ident && is_header_or_decl(t.text)) {
        if (seen_stmt)
          fail(t, "'" + t.text + "' must come before the pattern's statements",
               "declare tensors, params and lets first, then write the definitions");
        parse_header_or_decl(p);
      } else {
        p.stmts.push_back(parse_stmt());
        seen_stmt = true;
      }
    }
    next();  // '}'
    return p;
  }

  std::string parse_pattern_name() {
    const Token& t = peek();
    if (t.kind != TokenKind::Ident) fail(t, "expected a pattern name like 'nn.softmax', found " + describe(t));
    std::string name = next().text;
    if (!is_punct("."))
      fail(peek(), "pattern name '" + name + "' needs a domain prefix", "write it as domain.name, e.g. nn." + name);
    next();
    const Token& rest = peek();
    if (rest.kind != TokenKind::Ident) fail(rest, "expected a name after '" + name + ".'");
    name += "." + next().text;
    return name;
  }

  static bool is_header_or_decl(std::string_view w) {
    return w == "level" || w == "source" || w == "summary" || w == "types" || w == "params" ||
           w == "let" || w == "input" || w == "output" || w == "temp";
  }

  void parse_header_or_decl(Pattern& p) {
    const Token& kw = next();
    const std::string& w = kw.text;
    if (w == "level") {
      const Token& t = peek();
      if (is_ident("operator")) p.level = Level::Operator;
      else if (is_ident("fused")) p.level = Level::Fused;
      else if (is_ident("graph")) p.level = Level::Graph;
      else fail(t, "unknown level " + describe(t), "the levels are operator, fused and graph");
      if (p.has_level) fail(kw, "'level' is given twice");
      p.has_level = true;
      next();
    } else if (w == "source") {
      if (!p.source.empty()) fail(kw, "'source' is given twice");
      p.source = expect_string(w);
    } else if (w == "summary") {
      if (!p.summary.empty()) fail(kw, "'summary' is given twice");
      p.summary = expect_string(w);
    } else if (w == "types") {
      do p.type_params.push_back(expect_name("a type parameter name")); while (accept_punct(","));
    } else if (w == "params") {
      do p.params.push_back(expect_name("a parameter name")); while (accept_punct(","));
    } else if (w == "let") {
      LetDecl l;
      Ident id = expect_name("a let name");
      l.name = id.name;
      l.loc = id.loc;
      expect_punct("=", "after the let name");
      l.value = parse_expr();
      p.lets.push_back(std::move(l));
    } else {
      p.tensors.push_back(parse_tensor_decl(w == "input"    ? TensorRole::Input
                                            : w == "output" ? TensorRole::Output
                                                            : TensorRole::Temp));
    }
  }

  TensorDecl parse_tensor_decl(TensorRole role) {
    TensorDecl d;
    d.role = role;
    Ident id = expect_name("a tensor name");
    d.name = id.name;
    d.loc = id.loc;
    expect_punct(":", "between the tensor name and its type");
    d.type = parse_type();
    expect_punct("[", "to open the tensor's shape (e.g. f32[N, C])");
    if (is_punct("]")) fail(peek(), "a tensor needs at least one dimension", "use [1] for a scalar");
    do d.shape.push_back(parse_expr()); while (accept_punct(","));
    expect_punct("]", "to close the shape");
    if (is_ident("in")) {
      if (role != TensorRole::Input) fail(peek(), "only inputs have a domain");
      next();
      expect_punct("[", "to open the input's range (in [lo, hi])");
      d.domain.kind = DomainKind::Range;
      d.domain.lo = parse_expr();
      expect_punct(",", "between the range's bounds");
      d.domain.hi = parse_expr();
      expect_punct("]", "to close the input's range");
    } else if (is_ident("spd")) {
      if (role != TensorRole::Input) fail(peek(), "only inputs have a domain");
      next();
      d.domain.kind = DomainKind::Spd;
    }
    return d;
  }

  TypeRef parse_type() {
    const Token& t = peek();
    if (t.kind != TokenKind::Ident) fail(t, "expected a type (f32, i8, ... or a type parameter), found " + describe(t));
    next();
    return TypeRef{t.text, t.loc};
  }

  // ---- statements ----
  Stmt parse_stmt() {
    DepthGuard guard(*this);
    Stmt s;
    s.loc = peek().loc;
    if (is_ident("for")) {
      next();
      s.kind = StmtKind::For;
      s.ranges = parse_ranges();
      if (accept_punct(":")) {
        s.body.push_back(parse_stmt());
      } else if (accept_punct("{")) {
        s.block = true;
        while (!is_punct("}")) {
          if (peek().kind == TokenKind::End) fail(peek(), "unexpected end of file inside a 'for' block", "a '}' is missing");
          s.body.push_back(parse_stmt());
        }
        next();
      } else {
        fail(peek(), "expected ':' or '{' after the loop ranges, found " + describe(peek()));
      }
      return s;
    }
    const Token& t = peek();
    if (t.kind != TokenKind::Ident)
      fail(t, "expected a statement (an assignment `name[...] = ...` or `for`), found " + describe(t));
    Ident target = expect_name("a tensor name");
    s.kind = StmtKind::Assign;
    s.tensor = target.name;
    if (!is_punct("["))
      fail(peek(), "expected '[' after '" + target.name + "': assignments write tensor elements",
           "write " + target.name + "[i, ...] = ...");
    next();
    do s.indices.push_back(parse_expr()); while (accept_punct(","));
    expect_punct("]", "to close the indices");
    expect_punct("=", "in the assignment");
    s.value = parse_expr();
    return s;
  }

  std::vector<Range> parse_ranges() {
    std::vector<Range> rs;
    do {
      Range r;
      Ident id = expect_name("a loop variable");
      r.var = id.name;
      r.loc = id.loc;
      expect_keyword("in");
      r.lo = parse_expr();
      expect_punct("..", "in the range (lo..hi)");
      r.hi = parse_expr();
      rs.push_back(std::move(r));
    } while (accept_punct(","));
    return rs;
  }

  // ---- expressions ----
  ExprP parse_expr(int min_prec = 1) {
    DepthGuard guard(*this);
    ExprP lhs = parse_unary();
    // A left-associative chain (a + b + c ...) nests one level per operator without recursing
    // here, so count each one against the limit too: the tree's height, not just this parser's
    // stack, must stay bounded for every recursive pass (printer, verifier, destructors).
    struct ChainDepth {
      Parser& p;
      int n = 0;
      ~ChainDepth() { p.depth_ -= n; }
    } chain{*this};
    for (;;) {
      const Token& t = peek();
      if (t.kind != TokenKind::Punct) return lhs;
      const BinaryInfo* info = nullptr;
      for (const auto& b : kBinaryOps)
        if (b.text == t.text) info = &b;
      if (!info || info->prec < min_prec) return lhs;
      ++chain.n;
      if (++depth_ > kMaxDepth) fail(t, "nesting is too deep (more than 200 levels)",
                                     "split a long chain of operators, e.g. into a reduction");
      next();
      ExprP rhs = parse_expr(info->prec + 1);
      auto e = std::make_shared<Expr>();
      e->kind = ExprKind::Binary;
      e->binary_op = info->op;
      e->loc = t.loc;
      e->args = {lhs, rhs};
      lhs = e;
    }
  }

  ExprP parse_unary() {
    const Token& t = peek();
    if (is_punct("-") || is_punct("!")) {
      DepthGuard guard(*this);
      next();
      ExprP operand = parse_unary();
      bool neg = t.text == "-";
      // Fold negative literals so that "-1" prints and reparses as one literal.
      if (neg && operand->kind == ExprKind::IntLit &&
          operand->int_value != std::numeric_limits<int64_t>::min())
        return make_int(-operand->int_value, t.loc);
      if (neg && operand->kind == ExprKind::FloatLit) return make_float(-operand->float_value, t.loc);
      auto e = std::make_shared<Expr>();
      e->kind = ExprKind::Unary;
      e->unary_op = neg ? UnaryOp::Neg : UnaryOp::Not;
      e->loc = t.loc;
      e->args = {operand};
      return e;
    }
    return parse_primary();
  }

  static std::optional<ReduceOp> reduce_op_of(std::string_view w) {
    if (w == "sum") return ReduceOp::Sum;
    if (w == "prod") return ReduceOp::Prod;
    if (w == "max") return ReduceOp::Max;
    if (w == "min") return ReduceOp::Min;
    if (w == "argmax") return ReduceOp::Argmax;
    if (w == "argmin") return ReduceOp::Argmin;
    return std::nullopt;
  }

  ExprP parse_primary() {
    const Token& t = peek();
    auto e = std::make_shared<Expr>();
    e->loc = t.loc;
    switch (t.kind) {
      case TokenKind::Int:
        next();
        return make_int(t.int_value, t.loc);
      case TokenKind::Float:
        next();
        return make_float(t.float_value, t.loc);
      case TokenKind::Punct:
        if (t.text == "(") {
          next();
          ExprP inner = parse_expr();
          expect_punct(")", "to close the parenthesis");
          return inner;
        }
        fail(t, "expected an expression, found " + describe(t));
      case TokenKind::String:
        fail(t, "strings are not values in expressions");
      case TokenKind::End:
        fail(t, "unexpected end of file in an expression");
      case TokenKind::Ident:
        break;
    }
    const std::string& w = t.text;
    if (w == "true" || w == "false") {
      next();
      e->kind = ExprKind::BoolLit;
      e->bool_value = w == "true";
      return e;
    }
    if (w == "inf" || w == "nan") {
      next();
      return make_float(w == "inf" ? std::numeric_limits<double>::infinity()
                                   : std::numeric_limits<double>::quiet_NaN(),
                        t.loc);
    }
    if (w == "cast" || w == "sat") {
      next();
      expect_punct("(", "after '" + w + "'");
      e->kind = ExprKind::Cast;
      e->saturating = w == "sat";
      e->cast_type = parse_type();
      expect_punct(",", "after the type in " + w + "(type, value)");
      e->args = {parse_expr()};
      expect_punct(")", "to close " + w + "(...)");
      return e;
    }
    if (w == "pad" || w == "edge" || w == "mirror") {
      next();
      expect_punct("(", "after '" + w + "'");
      e->kind = ExprKind::Access;
      e->boundary = w == "pad" ? Boundary::Pad : w == "edge" ? Boundary::Edge : Boundary::Mirror;
      e->name = expect_name("a tensor name").name;
      if (e->boundary == Boundary::Pad) {
        expect_punct(",", "before the padding value in pad(tensor, value)");
        e->pad_value = parse_expr();
      }
      expect_punct(")", "to close " + w + "(...)");
      expect_punct("[", "after " + w + "(...): a boundary access is indexed like a tensor");
      parse_index_list(*e);
      return e;
    }
    if (auto op = reduce_op_of(w)) {
      // min/max are both reductions and two-argument functions: `x in` after '(' decides.
      bool is_reduce = is_punct("(", 1) && peek(2).kind == TokenKind::Ident && is_ident("in", 3);
      if (is_reduce || (*op != ReduceOp::Max && *op != ReduceOp::Min)) {
        next();
        expect_punct("(", "after '" + w + "'");
        e->kind = ExprKind::Reduce;
        e->reduce_op = *op;
        e->ranges = parse_ranges();
        expect_punct(":", "between the reduction's ranges and its body, as in sum(k in 0..K: ...)");
        e->args = {parse_expr()};
        expect_punct(")", "to close " + w + "(...)");
        return e;
      }
    }
    next();
    if (is_punct("(")) {
      next();
      e->kind = ExprKind::Call;
      e->name = w;
      if (!is_punct(")")) {
        do e->args.push_back(parse_expr()); while (accept_punct(","));
      }
      expect_punct(")", "to close the call to '" + w + "'");
      return e;
    }
    if (is_reserved_word(w)) fail(t, "'" + w + "' is a reserved word and cannot appear here");
    if (is_punct("[")) {
      next();
      e->kind = ExprKind::Access;
      e->name = w;
      parse_index_list(*e);
      return e;
    }
    e->kind = ExprKind::Name;
    e->name = w;
    return e;
  }

  void parse_index_list(Expr& e) {
    if (is_punct("]")) fail(peek(), "an access needs at least one index");
    do e.args.push_back(parse_expr()); while (accept_punct(","));
    expect_punct("]", "to close the indices");
  }

  // ---- workloads ----
  Workload parse_workload() {
    Workload w;
    w.loc = next().loc;  // 'workload'
    const Token& t = peek();
    if (t.kind != TokenKind::Ident) fail(t, "expected a workload name, found " + describe(t));
    w.name = next().text;
    while (peek().kind == TokenKind::Ident) {
      const std::string& tag = peek().text;
      if (tag != "micro" && tag != "mobile" && tag != "heldout" && tag != "warm")
        fail(peek(), "unknown workload tag '" + tag + "'",
             did_you_mean(tag, {"micro", "mobile", "heldout", "warm"}).empty()
                 ? "the tags are micro, mobile, heldout and warm"
                 : did_you_mean(tag, {"micro", "mobile", "heldout", "warm"}));
      for (const auto& x : w.tags)
        if (x == tag) fail(peek(), "tag '" + tag + "' is given twice");
      w.tags.push_back(next().text);
    }
    expect_punct("{", "to open the workload's bindings");
    if (!is_punct("}")) {
      do {
        Binding b;
        const Token& n = peek();
        if (n.kind != TokenKind::Ident) fail(n, "expected a parameter name, found " + describe(n));
        b.name = next().text;
        b.loc = n.loc;
        expect_punct("=", "after '" + b.name + "'");
        bool negative = accept_punct("-");
        const Token& v = peek();
        if (v.kind == TokenKind::Int) {
          b.int_value = negative ? -v.int_value : v.int_value;
          next();
        } else if (v.kind == TokenKind::Ident && !negative) {
          b.is_type = true;
          b.type_name = next().text;
        } else {
          fail(v, "expected an integer or a type for '" + b.name + "', found " + describe(v));
        }
        w.bindings.push_back(std::move(b));
      } while (accept_punct(","));
    }
    expect_punct("}", "to close the workload's bindings");
    return w;
  }

  // ---- schedule / memory layers ----
  LayerBlock parse_layer() {
    LayerBlock b;
    const Token& kw = next();
    b.loc = kw.loc;
    b.kind = kw.text == "schedule" ? LayerKind::Schedule : LayerKind::Memory;
    if (peek().kind == TokenKind::Ident) b.target = next().text;
    expect_punct("{", "to open the " + kw.text + " block");
    while (!is_punct("}")) {
      const Token& t = peek();
      if (t.kind == TokenKind::End) fail(t, "unexpected end of file inside the " + kw.text + " block", "a '}' is missing");
      if (t.kind != TokenKind::Ident) fail(t, "expected a directive such as split(...), found " + describe(t));
      Directive d;
      d.loc = t.loc;
      d.verb = next().text;
      expect_punct("(", "after the directive '" + d.verb + "'");
      if (!is_punct(")")) {
        do d.args.push_back(parse_directive_arg()); while (accept_punct(","));
      }
      expect_punct(")", "to close the directive '" + d.verb + "'");
      b.directives.push_back(std::move(d));
    }
    next();
    return b;
  }

  DirectiveArg parse_directive_arg() {
    DepthGuard guard(*this);
    DirectiveArg a;
    a.loc = peek().loc;
    if (peek().kind == TokenKind::Ident && is_punct("=", 1)) {
      a.key = next().text;
      next();
    }
    bool negative = accept_punct("-");
    const Token& t = peek();
    if (t.kind == TokenKind::Int) {
      a.kind = DirectiveArg::Kind::Int;
      a.int_value = negative ? -t.int_value : t.int_value;
      next();
      return a;
    }
    if (negative || t.kind != TokenKind::Ident)
      fail(t, "expected a name or an integer as a directive argument, found " + describe(t));
    a.text = next().text;
    while (is_punct(".") && peek(1).kind == TokenKind::Ident) {
      next();
      a.text += "." + next().text;
    }
    a.kind = DirectiveArg::Kind::Name;
    if (accept_punct("(")) {
      a.kind = DirectiveArg::Kind::Call;
      if (!is_punct(")")) {
        do a.args.push_back(parse_directive_arg()); while (accept_punct(","));
      }
      expect_punct(")", "to close '" + a.text + "(...)'");
    }
    return a;
  }

  std::string file_;
  std::vector<Token> toks_;
  size_t pos_ = 0;
  int depth_ = 0;
};

}  // namespace

bool is_reserved_word(std::string_view word) {
  for (auto w : kReserved)
    if (w == word) return true;
  return false;
}

bool is_target_reserved_name(std::string_view name) {
  static constexpr std::string_view kNames[] = {
      // C and C++ keywords likely to be chosen as names
      "auto", "bool", "break", "case", "char", "class", "const", "continue", "default", "delete", "do",
      "double", "else", "enum", "explicit", "extern", "float", "goto", "if", "inline", "int", "long",
      "new", "operator", "private", "public", "register", "restrict", "return", "short", "signed",
      "sizeof", "static", "struct", "switch", "template", "this", "typedef", "union", "unsigned",
      "void", "volatile", "while", "asm", "friend", "namespace", "using", "virtual", "typename",
      // CUDA and OpenCL C
      "half", "uchar", "ushort", "uint", "ulong", "kernel", "global", "local", "constant",
      "__global", "__local", "__kernel", "__constant", "threadIdx", "blockIdx", "blockDim", "gridDim",
      // the ABI's own names
      "stream", "scratch", "ekb_main", "ekb_scratch_bytes"};
  for (auto n : kNames)
    if (n == name) return true;
  return name.rfind("ekb_", 0) == 0 || name.rfind("__", 0) == 0;
}

bool is_target_library_name(std::string_view name) {
  // The C library functions the emitted kernels call: a tensor, param or let of that name would
  // shadow them inside ekb_main. (Loop variables are renamed by the lowering, so they may.)
  static constexpr std::string_view kNames[] = {
      "exp", "expf", "exp2", "exp2f", "log", "logf", "log2", "log2f", "log10", "sqrt", "sqrtf", "tanh",
      "tanhf", "erf", "erff", "sin", "sinf", "cos", "cosf", "tan", "tanf", "atan", "atanf", "atan2",
      "atan2f", "pow", "powf", "fabs", "fabsf", "floor", "floorf", "ceil", "ceilf", "round", "roundf",
      "rint", "rintf", "trunc", "truncf", "fma", "fmaf", "fmin", "fminf", "fmax", "fmaxf", "abs",
      "isnan", "isinf", "memcpy", "memset", "malloc", "free"};
  for (auto n : kNames)
    if (n == name) return true;
  return false;
}

Module parse_module(std::string_view text, const std::string& file) {
  return Parser(text, file).run();
}

}  // namespace ekb::ir
