#include "tvm/lir_json.h"

#include <limits>
#include <stdexcept>
#include <string>

#include "ir/types.h"

namespace ekb::tvm {

namespace {

using nlohmann::json;

const char* type_name(ir::ScalarType t) {
  switch (t) {
    case ir::ScalarType::Bool: return "bool";
    case ir::ScalarType::I8: return "i8";
    case ir::ScalarType::U8: return "u8";
    case ir::ScalarType::I16: return "i16";
    case ir::ScalarType::I32: return "i32";
    case ir::ScalarType::I64: return "i64";
    case ir::ScalarType::F16: return "f16";
    case ir::ScalarType::BF16: return "bf16";
    case ir::ScalarType::F32: return "f32";
    case ir::ScalarType::F64: return "f64";
    case ir::ScalarType::Index: return "index";
  }
  return "?";
}

const char* json_bin_op_name(lir::BinOp op) {
  using lir::BinOp;
  switch (op) {
    case BinOp::Add: return "add";
    case BinOp::Sub: return "sub";
    case BinOp::Mul: return "mul";
    case BinOp::Div: return "div";
    case BinOp::Mod: return "mod";
    case BinOp::TruncDiv: return "truncdiv";
    case BinOp::TruncMod: return "truncmod";
    case BinOp::Min: return "min";
    case BinOp::Max: return "max";
    case BinOp::Eq: return "eq";
    case BinOp::Ne: return "ne";
    case BinOp::Lt: return "lt";
    case BinOp::Le: return "le";
    case BinOp::Gt: return "gt";
    case BinOp::Ge: return "ge";
    case BinOp::And: return "and";
    case BinOp::Or: return "or";
    case BinOp::BitAnd: return "bitand";
    case BinOp::BitOr: return "bitor";
    case BinOp::BitXor: return "bitxor";
    case BinOp::Shl: return "shl";
    case BinOp::Shr: return "shr";
  }
  return "?";
}

const char* json_intrinsic_name(lir::Intrinsic f) {
  using lir::Intrinsic;
  switch (f) {
    case Intrinsic::Exp: return "exp";
    case Intrinsic::Log: return "log";
    case Intrinsic::Log2: return "log2";
    case Intrinsic::Exp2: return "exp2";
    case Intrinsic::Sqrt: return "sqrt";
    case Intrinsic::Rsqrt: return "rsqrt";
    case Intrinsic::Tanh: return "tanh";
    case Intrinsic::Erf: return "erf";
    case Intrinsic::Sin: return "sin";
    case Intrinsic::Cos: return "cos";
    case Intrinsic::Tan: return "tan";
    case Intrinsic::Atan: return "atan";
    case Intrinsic::Atan2: return "atan2";
    case Intrinsic::Sigmoid: return "sigmoid";
    case Intrinsic::Pow: return "pow";
    case Intrinsic::Floor: return "floor";
    case Intrinsic::Ceil: return "ceil";
    case Intrinsic::Round: return "round";
    case Intrinsic::RoundEven: return "round_even";
    case Intrinsic::Trunc: return "trunc";
    case Intrinsic::Fma: return "fma";
    case Intrinsic::Abs: return "abs";
    case Intrinsic::Rdmulh: return "rdmulh";
    case Intrinsic::Rshift: return "rshift";
    case Intrinsic::Requant: return "requant";
    case Intrinsic::MirrorIndex: return "mirror_index";
    case Intrinsic::ThreadRank: return "thread_rank";
  }
  return "?";
}

const char* json_for_kind_name(lir::ForKind k) {
  using lir::ForKind;
  switch (k) {
    case ForKind::Serial: return "serial";
    case ForKind::Parallel: return "parallel";
    case ForKind::Vectorized: return "vectorized";
    case ForKind::Unrolled: return "unrolled";
    case ForKind::GpuGridStride: return "grid_stride";  // one axis of its Kernel's flat iteration space
    default: throw std::invalid_argument("a loop bound to blocks or threads by a schedule is not translated");
  }
}

const char* json_scope_name(lir::MemoryScope s) {
  using lir::MemoryScope;
  switch (s) {
    case MemoryScope::Global: return "global";
    case MemoryScope::Stack: return "stack";
    case MemoryScope::Scratch: return "scratch";
    case MemoryScope::Shared: return "shared";
    case MemoryScope::Local: return "local";
  }
  return "?";
}

json exprs(const std::vector<lir::ExprP>& v);

// A Kernel's launch as the native gpu lowering decided it (outline_kernels): one thread, or its
// grid-stride loops' flat iteration space over blocks of `threads`.
json json_launch(const lir::Launch& l) {
  json j;
  switch (l.kind) {
    case lir::LaunchKind::Single: j["kind"] = "single"; break;
    case lir::LaunchKind::GridStride: j["kind"] = "grid_stride"; break;
    case lir::LaunchKind::Grid: throw std::invalid_argument("a launch bound by a schedule is not translated");
  }
  j["threads"] = l.geometry.block[0];
  j["loops"] = l.loops;
  j["extents"] = exprs(l.extents);
  return j;
}

json exprs(const std::vector<lir::ExprP>& v) {
  json a = json::array();
  for (const auto& e : v) a.push_back(expr_to_json(*e));
  return a;
}

}  // namespace

json expr_to_json(const lir::Expr& e) {
  using lir::ExprKind;
  json j;
  j["type"] = type_name(e.type);
  switch (e.kind) {
    case ExprKind::IntImm:
      j["k"] = "int";
      j["v"] = e.int_value;
      break;
    case ExprKind::FloatImm:
      j["k"] = "float";
      j["v"] = e.float_value;  // nlohmann prints the shortest exact decimal; inf/nan below
      if (e.float_value != e.float_value) j["v"] = "nan";
      else if (e.float_value == std::numeric_limits<double>::infinity()) j["v"] = "inf";
      else if (e.float_value == -std::numeric_limits<double>::infinity()) j["v"] = "-inf";
      break;
    case ExprKind::Var:
      j["k"] = "var";
      j["name"] = e.name;
      break;
    case ExprKind::Load:
      if (e.boundary != ir::Boundary::None) throw std::invalid_argument("a boundary read is left (run lower_boundaries)");
      j["k"] = "load";
      j["buffer"] = e.name;
      j["indices"] = exprs(e.args);
      break;
    case ExprKind::Unary:
      j["k"] = "unary";
      j["op"] = e.un_op == lir::UnOp::Neg ? "neg" : "not";
      j["no_wrap"] = e.no_wrap;
      j["args"] = exprs(e.args);
      break;
    case ExprKind::Binary:
      j["k"] = "binary";
      j["op"] = json_bin_op_name(e.bin_op);
      j["no_wrap"] = e.no_wrap;
      j["args"] = exprs(e.args);
      break;
    case ExprKind::Select:
      j["k"] = "select";
      j["args"] = exprs(e.args);
      break;
    case ExprKind::Call:
      j["k"] = "call";
      j["fn"] = json_intrinsic_name(e.intrinsic);
      j["args"] = exprs(e.args);
      break;
    case ExprKind::Cast:
      j["k"] = "cast";
      j["saturate"] = e.saturate;
      j["args"] = exprs(e.args);
      break;
    case ExprKind::Reduce:
      throw std::invalid_argument("a reduction is left (run lower_reductions)");
  }
  return j;
}

json stmt_to_json(const lir::Stmt& s) {
  using lir::StmtKind;
  json j;
  switch (s.kind) {
    case StmtKind::For:
      j["k"] = "for";
      j["var"] = s.name;
      j["min"] = expr_to_json(*s.min);
      j["extent"] = expr_to_json(*s.extent);
      j["kind"] = json_for_kind_name(s.for_kind);
      j["body"] = stmt_to_json(*s.body);
      break;
    case StmtKind::Store:
      j["k"] = "store";
      j["buffer"] = s.name;
      j["indices"] = exprs(s.indices);
      j["value"] = expr_to_json(*s.value);
      break;
    case StmtKind::Assign:
      j["k"] = "assign";
      j["var"] = s.name;
      j["value"] = expr_to_json(*s.value);
      break;
    case StmtKind::LetStmt:
      j["k"] = "let";
      j["var"] = s.name;
      j["type"] = type_name(s.type);
      j["value"] = expr_to_json(*s.value);
      j["body"] = stmt_to_json(*s.body);
      break;
    case StmtKind::DeclareVar:
      j["k"] = "declare";
      j["var"] = s.name;
      j["type"] = type_name(s.type);
      j["value"] = expr_to_json(*s.value);
      j["body"] = stmt_to_json(*s.body);
      break;
    case StmtKind::Block: {
      j["k"] = "block";
      json a = json::array();
      for (const auto& x : s.stmts) a.push_back(stmt_to_json(*x));
      j["stmts"] = std::move(a);
      break;
    }
    case StmtKind::IfThenElse:
      j["k"] = "if";
      j["cond"] = expr_to_json(*s.value);
      j["then"] = stmt_to_json(*s.body);
      if (s.else_body) j["else"] = stmt_to_json(*s.else_body);
      break;
    case StmtKind::Allocate:
      j["k"] = "allocate";
      j["buffer"] = s.name;
      j["type"] = type_name(s.type);
      j["extent"] = expr_to_json(*s.extent);
      j["scope"] = json_scope_name(s.scope);
      j["scratch_offset"] = s.scratch_offset;
      j["body"] = stmt_to_json(*s.body);
      break;
    case StmtKind::Kernel:
      j["k"] = "kernel";
      j["name"] = s.name;
      j["launch"] = json_launch(s.launch);
      j["body"] = stmt_to_json(*s.body);
      break;
    case StmtKind::Prefetch:
      j["k"] = "block";  // a hint only: TVM's LLVM decides its own prefetches
      j["stmts"] = json::array();
      break;
    case StmtKind::Barrier:
    case StmtKind::ThreadAllReduce:
      throw std::invalid_argument("a barrier or thread all-reduce (a schedule's) is not translated");
  }
  return j;
}

json func_to_json(const lir::Func& f) {
  json j;
  j["name"] = f.name;
  json buffers = json::array();
  for (const auto& b : f.buffers) {
    json jb;
    jb["name"] = b.name;
    jb["type"] = type_name(b.type);
    jb["shape"] = b.shape;
    jb["role"] = b.role == lir::BufferRole::Input ? "input" : b.role == lir::BufferRole::Output ? "output" : "temp";
    buffers.push_back(std::move(jb));
  }
  j["buffers"] = std::move(buffers);
  json params = json::array();
  for (const auto& p : f.params) params.push_back({{"name", p.name}, {"value", p.value}});
  j["params"] = std::move(params);
  j["scratch_bytes"] = f.scratch_bytes;
  j["body"] = stmt_to_json(*f.body);
  return j;
}

}  // namespace ekb::tvm
