#include "codegen/c_like_emitter.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <stdexcept>

#include "lir/simplify.h"

namespace ekb::codegen {

using lir::BinOp;
using lir::Expr;
using lir::ExprKind;
using lir::Intrinsic;
using lir::Stmt;
using lir::StmtKind;

std::string helper_suffix(ScalarType t) {
  switch (t) {
    case ScalarType::F32:
      return "f32";
    case ScalarType::F64:
      return "f64";
    case ScalarType::I64:
    case ScalarType::Index:
      return "i64";
    default:
      return "i32";  // bool, i8, u8, i16, i32: C computes them as int
  }
}

namespace {

// The name a conversion helper uses for an integer target type.
std::string int_type_tag(ScalarType t) {
  return t == ScalarType::Index ? "i64" : std::string(ir::scalar_type_name(t));
}

bool is_wide(ScalarType t) { return ir::bit_width(t) == 64; }

// "(a < b)" -> "a < b" where the context delimits the expression anyway (if, =, initializers).
std::string unparen(const std::string& s) {
  if (s.size() < 2 || s.front() != '(' || s.back() != ')') return s;
  int depth = 0;
  for (size_t i = 0; i + 1 < s.size(); ++i) {
    depth += s[i] == '(' ? 1 : s[i] == ')' ? -1 : 0;
    if (depth == 0) return s;  // the first '(' closes before the end: "(a) + (b)"
  }
  return s.substr(1, s.size() - 2);
}

}  // namespace

// ------------------------------------------------------------------------------- C's spellings
std::string CLikeEmitter::value_type(ScalarType t) const {
  switch (t) {
    case ScalarType::Bool:
      return "int";
    case ScalarType::I8:
      return "int8_t";
    case ScalarType::U8:
      return "uint8_t";
    case ScalarType::I16:
      return "int16_t";
    case ScalarType::I32:
      return "int32_t";
    case ScalarType::I64:
    case ScalarType::Index:
      return "int64_t";
    case ScalarType::F32:
      return "float";
    case ScalarType::F64:
      return "double";
    case ScalarType::F16:
    case ScalarType::BF16:
      break;
  }
  throw std::logic_error("emitter: half-precision arithmetic (lower with widen_half_precision)");
}

std::string CLikeEmitter::unsigned_type(int bits) const { return bits == 64 ? "uint64_t" : "uint32_t"; }

std::string CLikeEmitter::math_function(Intrinsic f, ScalarType t) const {
  std::string n;
  switch (f) {
    case Intrinsic::Abs:
      n = "fabs";
      break;
    case Intrinsic::RoundEven:
      n = "rint";
      break;  // the default rounding mode: half to even
    default:
      n = std::string(lir::intrinsic_name(f));
  }
  return t == ScalarType::F64 ? n : n + "f";
}

std::string CLikeEmitter::allocation(const Stmt& a, const std::string& indent) const {
  std::string t = storage_type(a.type);
  std::string n = std::to_string(a.extent->int_value);
  switch (a.scope) {
    case lir::MemoryScope::Stack:
    case lir::MemoryScope::Local:
      return indent + t + " " + a.name + "[" + n + "] __attribute__((aligned(" +
             std::to_string(std::max<int64_t>(64, a.alignment)) + ")));\n";
    case lir::MemoryScope::Scratch: {
      std::string at = "(char*)scratch + " + std::to_string(a.scratch_offset);
      // The workspace is 64-byte aligned; a larger alignment rounds up into room plan_storage reserved.
      if (a.alignment > 64)
        at = "(char*)(((uintptr_t)(" + at + ") + " + std::to_string(a.alignment - 1) + ") & ~(uintptr_t)" +
             std::to_string(a.alignment - 1) + ")";
      return indent + t + "* __restrict " + a.name + " = (" + t + "*)(" + at + ");  /* " + n + " elements */\n";
    }
    default:
      throw std::logic_error("emitter: temp '" + a.name + "' was not placed (run plan_storage)");
  }
}

std::string CLikeEmitter::prefetch_statement(const Stmt& prefetch) {
  throw std::logic_error("emitter: a software prefetch on a target without them");
}

// ------------------------------------------------------------------------------- literals
std::string CLikeEmitter::float_literal(double v, ScalarType t) const {
  bool f32 = t != ScalarType::F64;
  if (std::isnan(v)) return "NAN";
  if (std::isinf(v)) return v > 0 ? "INFINITY" : "(-INFINITY)";
  char buf[48];
  std::snprintf(buf, sizeof buf, f32 ? "%.9g" : "%.17g",
                f32 ? static_cast<double>(static_cast<float>(v)) : v);
  std::string s = buf;
  if (s.find_first_of(".e") == std::string::npos) s += ".0";
  if (f32) s += "f";
  return v < 0 ? "(" + s + ")" : s;
}

std::string CLikeEmitter::int_literal(int64_t v, ScalarType t) const {
  if (t == ScalarType::Bool) return v ? "1" : "0";
  if (v == INT64_MIN) return "(-9223372036854775807LL - 1)";
  std::string s = std::to_string(v < 0 ? -v : v);
  if (v > INT32_MAX || v < INT32_MIN) s += "LL";
  return v < 0 ? "(-" + s + ")" : s;
}

// ------------------------------------------------------------------------------- helpers
std::string CLikeEmitter::argument_names(const std::string& scratch_name) const {
  std::string s;
  auto add = [&](const std::string& n) { s += (s.empty() ? "" : ", ") + n; };
  for (lir::BufferRole role : {lir::BufferRole::Input, lir::BufferRole::Output})
    for (const lir::Buffer& b : f_.buffers)
      if (b.role == role) add(b.name);
  for (const lir::Param& p : f_.params) add(p.name);
  if (f_.scratch_bytes > 0) add(scratch_name);
  return s;
}

const std::string& CLikeEmitter::use_helper(const std::string& name) {
  if (!helper_set_.count(name)) {
    // Dependencies first, so that every helper is defined before it is called.
    if (name == "ekb_mirror_index") use_helper("ekb_floormod_i64");
    if (name == "ekb_requant") {
      use_helper("ekb_rdmulh");
      use_helper("ekb_rshift");
    }
    helper_set_.insert(name);
    helpers_.push_back(name);
  }
  return name;
}

std::string CLikeEmitter::helper_definition(const std::string& name) const {
  const std::string q = helper_qualifier() + " ";
  // Families with a type suffix: ekb_<op>_<type>.
  static const std::map<std::string, std::string> fixed = {
      {"ekb_floordiv_i64",
       "int64_t ekb_floordiv_i64(int64_t a, int64_t b) { /* floor division; INT64_MIN / -1 wraps */\n"
       "  if (b == -1) return (int64_t)(0u - (uint64_t)a);\n"
       "  int64_t q = a / b;\n"
       "  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;\n}\n"},
      {"ekb_floormod_i64",
       "int64_t ekb_floormod_i64(int64_t a, int64_t b) { /* floor modulo: the sign of b */\n"
       "  if (b == -1) return 0;\n"
       "  int64_t r = a % b;\n"
       "  return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;\n}\n"},
      {"ekb_min_i32", "int32_t ekb_min_i32(int32_t a, int32_t b) { return b < a ? b : a; }\n"},
      {"ekb_max_i32", "int32_t ekb_max_i32(int32_t a, int32_t b) { return a < b ? b : a; }\n"},
      {"ekb_min_i64", "int64_t ekb_min_i64(int64_t a, int64_t b) { return b < a ? b : a; }\n"},
      {"ekb_max_i64", "int64_t ekb_max_i64(int64_t a, int64_t b) { return a < b ? b : a; }\n"},
      // NaN in either operand gives NaN (the reference's min/max).
      {"ekb_fmin_f32", "float ekb_fmin_f32(float a, float b) { return (b < a || b != b) ? b : a; }\n"},
      {"ekb_fmax_f32", "float ekb_fmax_f32(float a, float b) { return (a < b || b != b) ? b : a; }\n"},
      {"ekb_fmin_f64", "double ekb_fmin_f64(double a, double b) { return (b < a || b != b) ? b : a; }\n"},
      {"ekb_fmax_f64", "double ekb_fmax_f64(double a, double b) { return (a < b || b != b) ? b : a; }\n"},
      {"ekb_abs_i32",
       "int32_t ekb_abs_i32(int32_t a) { return (int32_t)(a < 0 ? 0u - (uint32_t)a : (uint32_t)a); }\n"},
      {"ekb_abs_i64",
       "int64_t ekb_abs_i64(int64_t a) { return (int64_t)(a < 0 ? 0u - (uint64_t)a : (uint64_t)a); }\n"},
      {"ekb_nonzero_f32", "int ekb_nonzero_f32(float x) { return x != 0 && x == x; }\n"},
      {"ekb_nonzero_f64", "int ekb_nonzero_f64(double x) { return x != 0 && x == x; }\n"},
      {"ekb_mirror_index",
       "int64_t ekb_mirror_index(int64_t x, int64_t n) { /* reflect into [0, n), edge not repeated */\n"
       "  if ((uint64_t)x < (uint64_t)n) return x;\n"
       "  if (n == 1) return 0;\n"
       "  int64_t p = 2 * (n - 1), m = ekb_floormod_i64(x, p);\n"
       "  return m < n ? m : p - m;\n}\n"},
      {"ekb_rdmulh",
       "int32_t ekb_rdmulh(int32_t a, int32_t b) { /* gemmlowp SaturatingRoundingDoublingHighMul */\n"
       "  if (a == b && a == (-2147483647 - 1)) return 2147483647;\n"
       "  int64_t ab = (int64_t)a * (int64_t)b;\n"
       "  int64_t nudge = ab >= 0 ? ((int64_t)1 << 30) : (1 - ((int64_t)1 << 30));\n"
       "  return (int32_t)((ab + nudge) / ((int64_t)1 << 31));\n}\n"},
      {"ekb_rshift",
       "int32_t ekb_rshift(int32_t x, int32_t exponent) { /* gemmlowp RoundingDivideByPOT */\n"
       "  int32_t mask = (int32_t)(((int64_t)1 << exponent) - 1);\n"
       "  int32_t remainder = x & mask;\n"
       "  int32_t threshold = (mask >> 1) + (x < 0 ? 1 : 0);\n"
       "  return (x >> exponent) + (remainder > threshold ? 1 : 0);\n}\n"},
      {"ekb_requant",
       "int32_t ekb_requant(int32_t x, int32_t multiplier, int32_t shift) { /* TFLite "
       "MultiplyByQuantizedMultiplier */\n"
       "  int32_t left = shift > 0 ? shift : 0, right = shift > 0 ? 0 : -shift;\n"
       "  int32_t shifted = (int32_t)((uint32_t)x * ((uint32_t)1 << left));\n"
       "  return ekb_rshift(ekb_rdmulh(shifted, multiplier), right);\n}\n"},
  };
  if (auto it = fixed.find(name); it != fixed.end()) return q + it->second;

  static const std::pair<const char*, ScalarType> ints[] = {{"i8", ScalarType::I8},
                                                            {"u8", ScalarType::U8},
                                                            {"i16", ScalarType::I16},
                                                            {"i32", ScalarType::I32},
                                                            {"i64", ScalarType::I64}};
  for (const auto& [tag, t] : ints) {
    std::string vt = value_type(t);
    std::string lo = int_literal(ir::int_min(t), t), hi = int_literal(ir::int_max(t), t);
    // ekb_sat_<int>: an exact integer saturated to the type.
    if (name == std::string("ekb_sat_") + tag)
      return q + vt + " " + name + "(int64_t x) { return (" + vt + ")(x < " + lo + " ? " + lo + " : x > " +
             hi + " ? " + hi + " : x); }\n";
    // ekb_cvt_<int>_<float>: float to integer, truncating toward zero, saturating, NaN -> 0.
    for (ScalarType ft : {ScalarType::F32, ScalarType::F64}) {
      if (name != std::string("ekb_cvt_") + tag + "_" + helper_suffix(ft)) continue;
      std::string fv = value_type(ft);
      return q + vt + " " + name + "(" + fv + " x) {\n  if (x != x) return 0;\n  if (x <= " +
             float_literal(static_cast<double>(ir::int_min(t)), ft) + ") return " + lo +
             ";\n  if (x >= " + float_literal(static_cast<double>(ir::int_max(t)), ft) + ") return " + hi +
             ";\n  return (" + vt + ")x;\n}\n";
    }
  }
  throw std::logic_error("emitter: no definition for helper '" + name + "'");
}

std::string CLikeEmitter::prelude() const {
  std::string s;
  for (const std::string& h : helpers_) s += helper_definition(h);
  return s;
}

// ------------------------------------------------------------------------------- expressions
std::string CLikeEmitter::expr(const Expr& e) {
  switch (e.kind) {
    case ExprKind::IntImm:
      return int_literal(e.int_value, e.type);
    case ExprKind::FloatImm:
      return float_literal(e.float_value, e.type);
    case ExprKind::Var:
      return e.name;
    case ExprKind::Load:
      if (e.args.size() != 1 || e.boundary != ir::Boundary::None)
        throw std::logic_error("emitter: load of '" + e.name + "' is not flat (run the lowering passes)");
      return load_text(e, expr(*e.args[0]));
    case ExprKind::Unary: {
      std::string a = expr(*e.args[0]);
      if (e.un_op == lir::UnOp::Not) return "(!" + a + ")";
      if (ir::is_float(e.type)) return "(-" + a + ")";
      return int_arith(e, a, "");
    }
    case ExprKind::Binary:
      return binary(e);
    case ExprKind::Select:
      return "(" + expr(*e.args[0]) + " ? " + expr(*e.args[1]) + " : " + expr(*e.args[2]) + ")";
    case ExprKind::Call:
      return call(e);
    case ExprKind::Cast:
      return cast(e);
    case ExprKind::Reduce:
      throw std::logic_error("emitter: Reduce left in the loop IR (run lower_reductions)");
  }
  return "?";
}

// Integer +, -, * and negation wrap at the type's width: C's signed overflow is undefined, so
// 32- and 64-bit operations go through the unsigned type; narrower ones compute in int, where
// they cannot overflow, and convert back. Operations proven not to wrap are written plainly.
std::string CLikeEmitter::int_arith(const Expr& e, const std::string& a, const std::string& b) {
  bool neg = e.kind == ExprKind::Unary;
  std::string op = neg ? "-" : std::string(lir::bin_op_text(e.bin_op));
  if (e.no_wrap) {
    if (neg) return "(-" + a + ")";
    // x + (-3) reads better as x - 3.
    const Expr& rhs = *e.args[1];
    if (e.bin_op == BinOp::Add && rhs.kind == ExprKind::IntImm && rhs.int_value < 0 &&
        rhs.int_value != INT64_MIN)
      return "(" + a + " - " + int_literal(-rhs.int_value, rhs.type) + ")";
    return "(" + a + " " + op + " " + b + ")";
  }
  std::string vt = value_type(e.type);
  int bits = ir::bit_width(e.type);
  if (bits <= 16) return "((" + vt + ")" + (neg ? "(-" + a + ")" : "(" + a + " " + op + " " + b + ")") + ")";
  std::string u = "(" + unsigned_type(bits) + ")";
  if (neg) return "((" + vt + ")(0u - " + u + a + "))";
  return "((" + vt + ")(" + u + a + " " + op + " " + u + b + "))";
}

std::string CLikeEmitter::binary(const Expr& e) {
  const Expr& x = *e.args[0];
  ScalarType t = x.type;  // operand type
  std::string a = expr(x), b = expr(*e.args[1]);
  bool fl = ir::is_float(t);
  auto infix = [&](const char* op) { return "(" + a + " " + op + " " + b + ")"; };
  auto fn = [&](const std::string& name) { return name + "(" + a + ", " + b + ")"; };
  switch (e.bin_op) {
    case BinOp::Add:
    case BinOp::Sub:
    case BinOp::Mul:
      if (fl) return infix(std::string(lir::bin_op_text(e.bin_op)).c_str());
      return int_arith(e, a, b);
    case BinOp::Div:
    case BinOp::Mod: {
      if (fl) {
        if (e.bin_op == BinOp::Div) return infix("/");
        throw std::logic_error("emitter: float modulo");
      }
      std::string h = use_helper(e.bin_op == BinOp::Div ? "ekb_floordiv_i64" : "ekb_floormod_i64");
      return is_wide(t) ? fn(h) : "((" + value_type(t) + ")" + fn(h) + ")";
    }
    case BinOp::TruncDiv:
      return infix("/");
    case BinOp::TruncMod:
      return infix("%");
    case BinOp::Min:
    case BinOp::Max: {
      std::string op = e.bin_op == BinOp::Min ? "min" : "max";
      return fn(use_helper("ekb_" + std::string(fl ? "f" : "") + op + "_" + helper_suffix(t)));
    }
    case BinOp::Eq:
      return infix("==");
    case BinOp::Ne:
      return infix("!=");
    case BinOp::Lt:
      return infix("<");
    case BinOp::Le:
      return infix("<=");
    case BinOp::Gt:
      return infix(">");
    case BinOp::Ge:
      return infix(">=");
    case BinOp::And:
      return infix("&&");
    case BinOp::Or:
      return infix("||");
    case BinOp::BitAnd:
      return infix("&");
    case BinOp::BitOr:
      return infix("|");
    case BinOp::BitXor:
      return infix("^");
    case BinOp::Shl:
      // The exact value shifted in 64 bits, then wrapped to the type.
      return "((" + value_type(e.type) + ")((" + unsigned_type(64) + ")" + a + " << " + b + "))";
    case BinOp::Shr: {
      const Expr& k = *e.args[1];
      int width = is_wide(t) ? 64 : 32;  // C shifts narrow types as int
      if (k.kind == ExprKind::IntImm && k.int_value >= 0 && k.int_value < width) return infix(">>");
      return "((" + value_type(e.type) + ")((" + value_type(ScalarType::I64) + ")" + a + " >> " + b + "))";
    }
  }
  return "?";
}

std::string CLikeEmitter::call(const Expr& e) {
  ScalarType t = e.type;
  std::vector<std::string> a;
  for (const auto& x : e.args) a.push_back(expr(*x));
  auto join = [&](const std::string& name) {
    std::string s = name + "(";
    for (size_t i = 0; i < a.size(); ++i) s += (i ? ", " : "") + a[i];
    return s + ")";
  };
  switch (e.intrinsic) {
    case Intrinsic::Abs:
      if (ir::is_float(t)) return join(math_function(Intrinsic::Abs, t));
      if (is_wide(t)) return join(use_helper("ekb_abs_i64"));
      if (t == ScalarType::I32) return join(use_helper("ekb_abs_i32"));
      return "((" + value_type(t) + ")" + join(use_helper("ekb_abs_i32")) + ")";  // abs(-128) wraps in i8
    case Intrinsic::Rsqrt:
      return "(" + float_literal(1.0, t) + " / " + math_function(Intrinsic::Sqrt, t) + "(" + a[0] + "))";
    case Intrinsic::Sigmoid:
      return "(" + float_literal(1.0, t) + " / (" + float_literal(1.0, t) + " + " +
             math_function(Intrinsic::Exp, t) + "(-" + a[0] + ")))";
    case Intrinsic::Rdmulh:
      return join(use_helper("ekb_rdmulh"));
    case Intrinsic::Rshift:
      return join(use_helper("ekb_rshift"));
    case Intrinsic::Requant:
      return join(use_helper("ekb_requant"));
    case Intrinsic::MirrorIndex:
      return join(use_helper("ekb_mirror_index"));
    case Intrinsic::ThreadRank:
      return thread_rank_operand();
    default:
      return join(math_function(e.intrinsic, t));
  }
}

std::string CLikeEmitter::cast(const Expr& e) {
  ScalarType to = e.type, from = e.args[0]->type;
  std::string a = expr(*e.args[0]);
  if (to == from) return a;
  auto c_cast = [&](ScalarType t, const std::string& x) { return "((" + value_type(t) + ")" + x + ")"; };
  if (ir::is_half(to)) {
    if (from == ScalarType::F64)
      a = c_cast(ScalarType::F32, a);
    else if (!ir::is_float(from))
      a = c_cast(ScalarType::F32, a);
    return half_conversion(to, true) + "(" + a + ")";
  }
  if (ir::is_half(from)) {
    a = half_conversion(from, false) + "(" + a + ")";
    from = ScalarType::F32;
    if (to == from) return a;
  }
  if (ir::is_float(from)) {
    if (ir::is_float(to)) return c_cast(to, a);
    if (to == ScalarType::Bool) return use_helper("ekb_nonzero_" + helper_suffix(from)) + "(" + a + ")";
    return use_helper("ekb_cvt_" + int_type_tag(to) + "_" + helper_suffix(from)) + "(" + a + ")";
  }
  // from an integer or bool
  if (ir::is_float(to)) return c_cast(to, a);
  if (to == ScalarType::Bool) return "(" + a + " != 0)";
  bool widening = from == ScalarType::Bool ||
                  (ir::int_min(to) <= ir::int_min(from) && ir::int_max(from) <= ir::int_max(to));
  if (e.saturate && !widening) return use_helper("ekb_sat_" + int_type_tag(to)) + "(" + a + ")";
  return c_cast(to, a);  // value-preserving, or wrapping (C converts modulo 2^n)
}

std::string CLikeEmitter::load_text(const Expr& load, const std::string& index) {
  return load.name + "[" + index + "]";
}

std::string CLikeEmitter::store_text(const Stmt& store, const std::string& index, const std::string& value) {
  return store.name + "[" + index + "] = " + value + ";";
}

// ------------------------------------------------------------------------------- statements
void CLikeEmitter::open_loop(const Stmt& s, int indent) {
  const std::string pad(static_cast<size_t>(indent), ' ');
  const std::string note = loop_annotation(s);
  if (!note.empty()) out_ += pad + note + "\n";
  std::string end = expr(*lir::simplify(lir::binary(BinOp::Add, s.min, s.extent)));  // after '<': keep parens
  std::string it = value_type(ScalarType::Index);
  out_ += pad + "for (" + it + " " + s.name + " = " + unparen(expr(*s.min)) + "; " + s.name + " < " + end + "; ++" +
          s.name + ") {\n";
}

void CLikeEmitter::stmt(const Stmt& s, int indent) {
  std::string pad(static_cast<size_t>(indent), ' ');
  if (launches_kernels() && !launch_ && s.kind != StmtKind::Kernel && s.kind != StmtKind::Block)
    throw std::logic_error("emitter: a statement outside a kernel (lower with the target's lower options)");
  switch (s.kind) {
    case StmtKind::For:
      switch (s.for_kind) {
        case lir::ForKind::GpuBlock:
        case lir::ForKind::GpuThread:
        case lir::ForKind::GpuCooperative:
        case lir::ForKind::GpuGridStride:
          return gpu_loop(s, indent);
        default:
          break;
      }
      open_loop(s, indent);
      stmt(*s.body, indent + 2);
      out_ += pad + "}\n";
      return;
    case StmtKind::Store:
      if (s.indices.size() != 1) throw std::logic_error("emitter: store to '" + s.name + "' is not flat");
      out_ += pad + store_text(s, unparen(expr(*s.indices[0])), unparen(expr(*s.value))) + "\n";
      return;
    case StmtKind::Assign:
      out_ += pad + s.name + " = " + unparen(expr(*s.value)) + ";\n";
      return;
    case StmtKind::LetStmt:
      out_ += pad + "const " + value_type(s.type) + " " + s.name + " = " + unparen(expr(*s.value)) + ";\n";
      stmt(*s.body, indent);
      return;
    case StmtKind::DeclareVar:
      out_ += pad + value_type(s.type) + " " + s.name + " = " + unparen(expr(*s.value)) + ";\n";
      stmt(*s.body, indent);
      return;
    case StmtKind::Block:
      for (const auto& b : s.stmts) stmt(*b, indent);
      return;
    case StmtKind::IfThenElse:
      out_ += pad + "if (" + unparen(expr(*s.value)) + ") {\n";
      stmt(*s.body, indent + 2);
      if (s.else_body) {
        out_ += pad + "} else {\n";
        stmt(*s.else_body, indent + 2);
      }
      out_ += pad + "}\n";
      return;
    case StmtKind::Allocate:
      // Shared memory lives for the whole kernel (outline_kernels put it at the kernel's top).
      out_ += s.scope == lir::MemoryScope::Shared ? shared_declaration(s) : allocation(s, pad);
      stmt(*s.body, indent);
      return;
    case StmtKind::Barrier:
      out_ += pad + barrier_statement() + "\n";
      return;
    case StmtKind::Prefetch:
      out_ += pad + prefetch_statement(s) + "\n";
      return;
    case StmtKind::Kernel:
      return kernel(s);
    case StmtKind::ThreadAllReduce:
      return all_reduce(s, indent);
  }
}

std::string CLikeEmitter::emit() {
  out_.clear();
  helpers_.clear();
  helper_set_.clear();
  kernels_.clear();
  // The body first, so that the prelude knows which helpers are used (and the kernels are printed).
  if (f_.body) stmt(*f_.body, 2);
  std::string body = std::move(out_);
  std::string s = file_header();
  std::string pre = prelude();
  if (!pre.empty()) s += pre + "\n";
  s += before_entry();
  s += entry_begin() + "\n" + body + entry_end() + after_entry();
  return s;
}

}  // namespace ekb::codegen
