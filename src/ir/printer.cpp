#include "ir/printer.h"

#include <charconv>
#include <cmath>

namespace ekb::ir {

namespace {

int precedence(BinaryOp op) {
  switch (op) {
    case BinaryOp::Or: return 1;
    case BinaryOp::And: return 2;
    case BinaryOp::Eq: case BinaryOp::Ne: case BinaryOp::Lt:
    case BinaryOp::Le: case BinaryOp::Gt: case BinaryOp::Ge: return 3;
    case BinaryOp::BitOr: return 4;
    case BinaryOp::BitXor: return 5;
    case BinaryOp::BitAnd: return 6;
    case BinaryOp::Shl: case BinaryOp::Shr: return 7;
    case BinaryOp::Add: case BinaryOp::Sub: return 8;
    case BinaryOp::Mul: case BinaryOp::Div: case BinaryOp::Mod: return 9;
  }
  return 0;
}
constexpr int kUnaryPrec = 10;

// Precedence of an expression as an operand: literals print a leading '-' when negative, so they
// bind like a unary expression.
int operand_precedence(const Expr& e) {
  if (e.kind == ExprKind::Binary) return precedence(e.binary_op);
  if (e.kind == ExprKind::Unary) return kUnaryPrec;
  if (e.kind == ExprKind::IntLit && e.int_value < 0) return kUnaryPrec;
  if (e.kind == ExprKind::FloatLit && std::signbit(e.float_value) && !std::isnan(e.float_value))
    return kUnaryPrec;
  return 11;
}

std::string quote(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\', out += c;
    else if (c == '\n') out += "\\n";
    else out += c;
  }
  return out + "\"";
}

void print_expr_to(std::string& out, const Expr& e);

void print_list(std::string& out, const std::vector<ExprP>& xs) {
  for (size_t i = 0; i < xs.size(); ++i) {
    if (i) out += ", ";
    print_expr_to(out, *xs[i]);
  }
}

void print_ranges(std::string& out, const std::vector<Range>& rs) {
  for (size_t i = 0; i < rs.size(); ++i) {
    if (i) out += ", ";
    out += rs[i].var + " in ";
    print_expr_to(out, *rs[i].lo);
    out += "..";
    print_expr_to(out, *rs[i].hi);
  }
}

void print_operand(std::string& out, const Expr& e, int min_prec) {
  bool parens = operand_precedence(e) < min_prec;
  if (parens) out += "(";
  print_expr_to(out, e);
  if (parens) out += ")";
}

void print_expr_to(std::string& out, const Expr& e) {
  switch (e.kind) {
    case ExprKind::IntLit: out += std::to_string(e.int_value); return;
    case ExprKind::FloatLit: out += print_float(e.float_value); return;
    case ExprKind::BoolLit: out += e.bool_value ? "true" : "false"; return;
    case ExprKind::Name: out += e.name; return;
    case ExprKind::Access:
      if (e.boundary != Boundary::None) {
        out += std::string(boundary_name(e.boundary)) + "(" + e.name;
        if (e.boundary == Boundary::Pad) {
          out += ", ";
          print_expr_to(out, *e.pad_value);
        }
        out += ")";
      } else {
        out += e.name;
      }
      out += "[";
      print_list(out, e.args);
      out += "]";
      return;
    case ExprKind::Unary:
      out += e.unary_op == UnaryOp::Neg ? "-" : "!";
      // "- -x" would lex fine as two '-', but a space keeps it readable.
      if (operand_precedence(*e.args[0]) == kUnaryPrec) out += " ";
      print_operand(out, *e.args[0], kUnaryPrec);
      return;
    case ExprKind::Binary: {
      int p = precedence(e.binary_op);
      print_operand(out, *e.args[0], p);
      out += " ";
      out += binary_op_text(e.binary_op);
      out += " ";
      print_operand(out, *e.args[1], p + 1);  // left-associative: an equal-precedence right side needs parens
      return;
    }
    case ExprKind::Call:
      out += e.name + "(";
      print_list(out, e.args);
      out += ")";
      return;
    case ExprKind::Cast:
      out += e.saturating ? "sat(" : "cast(";
      out += e.cast_type.name + ", ";
      print_expr_to(out, *e.args[0]);
      out += ")";
      return;
    case ExprKind::Reduce:
      out += std::string(reduce_op_name(e.reduce_op)) + "(";
      print_ranges(out, e.ranges);
      out += ": ";
      print_expr_to(out, *e.args[0]);
      out += ")";
      return;
  }
}

void print_stmt_to(std::string& out, const Stmt& s, int indent) {
  std::string pad(indent, ' ');
  out += pad;
  if (s.kind == StmtKind::Assign) {
    out += s.tensor + "[";
    print_list(out, s.indices);
    out += "] = ";
    print_expr_to(out, *s.value);
    out += "\n";
    return;
  }
  out += "for ";
  print_ranges(out, s.ranges);
  if (!s.block && s.body.size() == 1) {
    out += ": ";
    std::string inner;
    print_stmt_to(inner, s.body[0], indent);
    out += inner.substr(static_cast<size_t>(indent));
    return;
  }
  out += " {\n";
  for (const auto& b : s.body) print_stmt_to(out, b, indent + 2);
  out += pad + "}\n";
}

void print_directive_arg(std::string& out, const DirectiveArg& a) {
  if (!a.key.empty()) out += a.key + "=";
  switch (a.kind) {
    case DirectiveArg::Kind::Int: out += std::to_string(a.int_value); break;
    case DirectiveArg::Kind::Name: out += a.text; break;
    case DirectiveArg::Kind::Call:
      out += a.text + "(";
      for (size_t i = 0; i < a.args.size(); ++i) {
        if (i) out += ", ";
        print_directive_arg(out, a.args[i]);
      }
      out += ")";
      break;
  }
}

}  // namespace

std::string print_float(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[64];
  auto [ptr, ec] = std::to_chars(buf, buf + sizeof buf, v);
  std::string s(buf, ptr);
  if (s.find_first_of(".e") == std::string::npos) s += ".0";
  return s;
}

std::string print_expr(const Expr& e) {
  std::string out;
  print_expr_to(out, e);
  return out;
}

std::string print_stmt(const Stmt& s, int indent) {
  std::string out;
  print_stmt_to(out, s, indent);
  return out;
}

std::string print_pattern(const Pattern& p) {
  std::string out = "pattern " + p.name + " {\n";
  if (p.has_level) out += "  level " + std::string(level_name(p.level)) + "\n";
  if (!p.source.empty()) out += "  source " + quote(p.source) + "\n";
  if (!p.summary.empty()) out += "  summary " + quote(p.summary) + "\n";
  auto ident_list = [](const std::vector<Ident>& ids) {
    std::string s;
    for (size_t i = 0; i < ids.size(); ++i) s += (i ? ", " : "") + ids[i].name;
    return s;
  };
  if (!p.type_params.empty()) out += "  types " + ident_list(p.type_params) + "\n";
  if (!p.params.empty()) out += "  params " + ident_list(p.params) + "\n";
  for (const auto& l : p.lets) out += "  let " + l.name + " = " + print_expr(*l.value) + "\n";
  for (const auto& t : p.tensors) {
    out += "  " + std::string(role_name(t.role)) + " " + t.name + " : " + t.type.name + "[";
    print_list(out, t.shape);
    out += "]";
    if (t.domain.kind == DomainKind::Range) {
      out += " in [" + print_expr(*t.domain.lo) + ", " + print_expr(*t.domain.hi) + "]";
    } else if (t.domain.kind == DomainKind::Spd) {
      out += " spd";
    }
    out += "\n";
  }
  if (!p.stmts.empty()) out += "\n";
  for (const auto& s : p.stmts) print_stmt_to(out, s, 2);
  out += "}\n";
  return out;
}

std::string print_workload(const Workload& w) {
  std::string out = "workload " + w.name;
  for (const auto& t : w.tags) out += " " + t;
  out += " {";
  for (size_t i = 0; i < w.bindings.size(); ++i) {
    const Binding& b = w.bindings[i];
    out += (i ? ", " : " ") + b.name + " = " + (b.is_type ? b.type_name : std::to_string(b.int_value));
  }
  out += w.bindings.empty() ? "}\n" : " }\n";
  return out;
}

std::string print_layer(const LayerBlock& b) {
  std::string out = b.kind == LayerKind::Schedule ? "schedule" : "memory";
  if (!b.target.empty()) out += " " + b.target;
  out += " {\n";
  for (const auto& d : b.directives) out += "  " + print_directive(d) + "\n";
  out += "}\n";
  return out;
}

std::string print_directive(const Directive& d) {
  std::string out = d.verb + "(";
  for (size_t i = 0; i < d.args.size(); ++i) {
    if (i) out += ", ";
    print_directive_arg(out, d.args[i]);
  }
  return out + ")";
}

std::string print_module(const Module& m) {
  std::string out = print_pattern(m.pattern);
  if (!m.workloads.empty()) out += "\n";
  for (const auto& w : m.workloads) out += print_workload(w);
  for (const auto& b : m.layers) out += "\n" + print_layer(b);
  return out;
}

}  // namespace ekb::ir
