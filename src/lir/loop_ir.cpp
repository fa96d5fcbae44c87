#include "lir/loop_ir.h"

#include <cmath>
#include <cstdio>
#include <limits>
#include <stdexcept>

namespace ekb::lir {

// ------------------------------------------------------------------------------- constructors
namespace {
std::shared_ptr<Expr> node(ExprKind k, ScalarType t) {
  auto e = std::make_shared<Expr>();
  e->kind = k;
  e->type = t;
  return e;
}
}  // namespace

ExprP int_imm(ScalarType t, int64_t v) {
  auto e = node(ExprKind::IntImm, t);
  e->int_value = v;
  return e;
}
ExprP index_imm(int64_t v) { return int_imm(ScalarType::Index, v); }
ExprP bool_imm(bool v) { return int_imm(ScalarType::Bool, v ? 1 : 0); }

ExprP float_imm(ScalarType t, double v) {
  auto e = node(ExprKind::FloatImm, t);
  e->float_value = v;
  return e;
}

ExprP var(std::string name, ScalarType t) {
  auto e = node(ExprKind::Var, t);
  e->name = std::move(name);
  return e;
}

ExprP load(std::string buffer, ScalarType t, std::vector<ExprP> indices) {
  auto e = node(ExprKind::Load, t);
  e->name = std::move(buffer);
  e->args = std::move(indices);
  return e;
}

ExprP unary(UnOp op, ExprP a) {
  auto e = node(ExprKind::Unary, op == UnOp::Not ? ScalarType::Bool : a->type);
  e->un_op = op;
  e->args = {std::move(a)};
  return e;
}

bool is_comparison(BinOp op) { return op >= BinOp::Eq && op <= BinOp::Ge; }

ExprP combine_identity(BinOp op, ScalarType t) {
  const double inf = std::numeric_limits<double>::infinity();
  switch (op) {
    case BinOp::Add:
      return ir::is_float(t) ? float_imm(t, 0) : int_imm(t, 0);
    case BinOp::Mul:
      return ir::is_float(t) ? float_imm(t, 1) : int_imm(t, 1);
    case BinOp::Max:
      return ir::is_float(t) ? float_imm(t, -inf) : int_imm(t, ir::int_min(t));
    case BinOp::Min:
      return ir::is_float(t) ? float_imm(t, inf) : int_imm(t, ir::int_max(t));
    default:
      throw std::logic_error("combine_identity: not a reduction operator");
  }
}

ExprP binary(BinOp op, ExprP a, ExprP b) {
  bool to_bool = is_comparison(op) || op == BinOp::And || op == BinOp::Or;
  auto e = node(ExprKind::Binary, to_bool ? ScalarType::Bool : a->type);
  e->bin_op = op;
  e->args = {std::move(a), std::move(b)};
  return e;
}

ExprP select(ExprP cond, ExprP a, ExprP b) {
  auto e = node(ExprKind::Select, a->type);
  e->args = {std::move(cond), std::move(a), std::move(b)};
  return e;
}

ExprP call(Intrinsic f, ScalarType t, std::vector<ExprP> args) {
  auto e = node(ExprKind::Call, t);
  e->intrinsic = f;
  e->args = std::move(args);
  return e;
}

ExprP cast(ScalarType t, ExprP v, bool saturate) {
  auto e = node(ExprKind::Cast, t);
  e->saturate = saturate;
  e->args = {std::move(v)};
  return e;
}

ExprP with_args(const Expr& e, std::vector<ExprP> args) {
  auto n = std::make_shared<Expr>(e);
  n->args = std::move(args);
  return n;
}

bool is_const(const Expr& e) { return e.kind == ExprKind::IntImm || e.kind == ExprKind::FloatImm; }
bool is_int_const(const Expr& e, int64_t v) { return e.kind == ExprKind::IntImm && e.int_value == v; }

bool equal(const ExprP& a, const ExprP& b) {
  if (a == b) return true;
  if (!a || !b) return false;
  return equal(*a, *b);
}

bool equal(const Expr& a, const Expr& b) {
  if (&a == &b) return true;
  if (a.kind != b.kind || a.type != b.type || a.args.size() != b.args.size()) return false;
  switch (a.kind) {
    case ExprKind::IntImm:
      return a.int_value == b.int_value;
    case ExprKind::FloatImm:
      return a.float_value == b.float_value || (std::isnan(a.float_value) && std::isnan(b.float_value));
    case ExprKind::Var:
      return a.name == b.name;
    case ExprKind::Load:
      if (a.name != b.name || a.boundary != b.boundary || !equal(a.pad, b.pad)) return false;
      break;
    case ExprKind::Unary:
      if (a.un_op != b.un_op) return false;
      break;
    case ExprKind::Binary:
      if (a.bin_op != b.bin_op) return false;
      break;
    case ExprKind::Call:
      if (a.intrinsic != b.intrinsic) return false;
      break;
    case ExprKind::Cast:
      if (a.saturate != b.saturate) return false;
      break;
    case ExprKind::Select:
      break;
    case ExprKind::Reduce: {
      if (a.reduce_op != b.reduce_op || a.ranges.size() != b.ranges.size()) return false;
      for (size_t i = 0; i < a.ranges.size(); ++i)
        if (a.ranges[i].var != b.ranges[i].var || !equal(a.ranges[i].min, b.ranges[i].min) ||
            !equal(a.ranges[i].extent, b.ranges[i].extent))
          return false;
      break;
    }
  }
  for (size_t i = 0; i < a.args.size(); ++i)
    if (!equal(a.args[i], b.args[i])) return false;
  return true;
}

// ------------------------------------------------------------------------------- statements
namespace {
std::shared_ptr<Stmt> snode(StmtKind k) {
  auto s = std::make_shared<Stmt>();
  s->kind = k;
  return s;
}
}  // namespace

StmtP make_for(std::string v, ExprP min, ExprP extent, StmtP body, ForKind kind) {
  auto s = snode(StmtKind::For);
  s->name = std::move(v);
  s->min = std::move(min);
  s->extent = std::move(extent);
  s->body = std::move(body);
  s->for_kind = kind;
  return s;
}

StmtP make_store(std::string buffer, std::vector<ExprP> indices, ExprP value) {
  auto s = snode(StmtKind::Store);
  s->name = std::move(buffer);
  s->indices = std::move(indices);
  s->value = std::move(value);
  return s;
}

StmtP make_assign(std::string v, ExprP value) {
  auto s = snode(StmtKind::Assign);
  s->name = std::move(v);
  s->type = value->type;
  s->value = std::move(value);
  return s;
}

StmtP make_let(std::string v, ExprP value, StmtP body) {
  auto s = snode(StmtKind::LetStmt);
  s->name = std::move(v);
  s->type = value->type;
  s->value = std::move(value);
  s->body = std::move(body);
  return s;
}

StmtP make_declare(std::string v, ScalarType t, ExprP init, StmtP body) {
  auto s = snode(StmtKind::DeclareVar);
  s->name = std::move(v);
  s->type = t;
  s->value = std::move(init);
  s->body = std::move(body);
  return s;
}

StmtP make_block(std::vector<StmtP> stmts) {
  std::vector<StmtP> flat;
  for (auto& s : stmts) {
    if (!s) continue;
    if (s->kind == StmtKind::Block) {
      flat.insert(flat.end(), s->stmts.begin(), s->stmts.end());
    } else {
      flat.push_back(std::move(s));
    }
  }
  if (flat.size() == 1) return flat[0];
  auto b = snode(StmtKind::Block);
  b->stmts = std::move(flat);
  return b;
}

StmtP make_if(ExprP cond, StmtP then_body, StmtP else_body) {
  auto s = snode(StmtKind::IfThenElse);
  s->value = std::move(cond);
  s->body = std::move(then_body);
  s->else_body = std::move(else_body);
  return s;
}

StmtP make_allocate(std::string buffer, ScalarType t, int64_t extent, MemoryScope scope, StmtP body) {
  auto s = snode(StmtKind::Allocate);
  s->name = std::move(buffer);
  s->type = t;
  s->extent = index_imm(extent);
  s->scope = scope;
  s->body = std::move(body);
  return s;
}

StmtP make_barrier() { return snode(StmtKind::Barrier); }

StmtP make_prefetch(std::string buffer, ExprP index, int64_t byte_offset) {
  auto s = snode(StmtKind::Prefetch);
  s->name = std::move(buffer);
  s->indices = {std::move(index)};
  s->byte_offset = byte_offset;
  return s;
}

StmtP make_kernel(std::string name, Launch launch, StmtP body) {
  auto s = snode(StmtKind::Kernel);
  s->name = std::move(name);
  s->launch = std::move(launch);
  s->body = std::move(body);
  return s;
}

StmtP make_thread_all_reduce(std::vector<Stmt::Combine> combines, int axis, AllReduceForm form) {
  auto s = snode(StmtKind::ThreadAllReduce);
  s->combines = std::move(combines);
  s->gpu_axis = axis;
  s->form = form;
  return s;
}

bool is_no_op(const Stmt& s) { return s.kind == StmtKind::Block && s.stmts.empty(); }

// ------------------------------------------------------------------------------- functions
int64_t Buffer::num_elements() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

const Buffer* Func::buffer(const std::string& n) const {
  for (const Buffer& b : buffers)
    if (b.name == n) return &b;
  return nullptr;
}

Stage* Func::stage(const std::string& stage_name) {
  for (Stage& s : stages)
    if (s.name == stage_name) return &s;
  return nullptr;
}

StageLoop* Stage::loop(const std::string& loop_name) {
  for (StageLoop& l : loops)
    if (l.name == loop_name) return &l;
  return nullptr;
}

const StageLoop* Stage::loop(const std::string& loop_name) const {
  return const_cast<Stage*>(this)->loop(loop_name);
}

StageLoop* Stage::loop_of_var(const std::string& var) {
  for (StageLoop& l : loops)
    for (const std::string& v : l.vars)
      if (v == var) return &l;
  return nullptr;
}

std::string_view loop_role_name(LoopRole r) {
  switch (r) {
    case LoopRole::Pure:
      return "pure";
    case LoopRole::Reduction:
      return "reduction";
    case LoopRole::Ordered:
      return "ordered";
    case LoopRole::Free:
      return "free";
  }
  return "?";
}

std::string Func::fresh_name(const std::string& base) {
  std::string n = base;
  for (int k = 1; names.count(n); ++k) n = base + "_" + std::to_string(k);
  names.insert(n);
  return n;
}

// ------------------------------------------------------------------------------- printing
std::string_view bin_op_text(BinOp op) {
  switch (op) {
    case BinOp::Add:
      return "+";
    case BinOp::Sub:
      return "-";
    case BinOp::Mul:
      return "*";
    case BinOp::Div:
      return "/";
    case BinOp::Mod:
      return "%";
    case BinOp::TruncDiv:
      return "truncdiv";
    case BinOp::TruncMod:
      return "truncmod";
    case BinOp::Min:
      return "min";
    case BinOp::Max:
      return "max";
    case BinOp::Eq:
      return "==";
    case BinOp::Ne:
      return "!=";
    case BinOp::Lt:
      return "<";
    case BinOp::Le:
      return "<=";
    case BinOp::Gt:
      return ">";
    case BinOp::Ge:
      return ">=";
    case BinOp::And:
      return "&&";
    case BinOp::Or:
      return "||";
    case BinOp::BitAnd:
      return "&";
    case BinOp::BitOr:
      return "|";
    case BinOp::BitXor:
      return "^";
    case BinOp::Shl:
      return "<<";
    case BinOp::Shr:
      return ">>";
  }
  return "?";
}

std::string_view intrinsic_name(Intrinsic f) {
  switch (f) {
    case Intrinsic::Exp:
      return "exp";
    case Intrinsic::Log:
      return "log";
    case Intrinsic::Log2:
      return "log2";
    case Intrinsic::Exp2:
      return "exp2";
    case Intrinsic::Sqrt:
      return "sqrt";
    case Intrinsic::Rsqrt:
      return "rsqrt";
    case Intrinsic::Tanh:
      return "tanh";
    case Intrinsic::Erf:
      return "erf";
    case Intrinsic::Sin:
      return "sin";
    case Intrinsic::Cos:
      return "cos";
    case Intrinsic::Tan:
      return "tan";
    case Intrinsic::Atan:
      return "atan";
    case Intrinsic::Atan2:
      return "atan2";
    case Intrinsic::Sigmoid:
      return "sigmoid";
    case Intrinsic::Pow:
      return "pow";
    case Intrinsic::Floor:
      return "floor";
    case Intrinsic::Ceil:
      return "ceil";
    case Intrinsic::Round:
      return "round";
    case Intrinsic::RoundEven:
      return "round_even";
    case Intrinsic::Trunc:
      return "trunc";
    case Intrinsic::Fma:
      return "fma";
    case Intrinsic::Abs:
      return "abs";
    case Intrinsic::Rdmulh:
      return "rdmulh";
    case Intrinsic::Rshift:
      return "rshift";
    case Intrinsic::Requant:
      return "requant";
    case Intrinsic::MirrorIndex:
      return "mirror_index";
    case Intrinsic::ThreadRank:
      return "thread_rank";
  }
  return "?";
}

std::string_view for_kind_name(ForKind k) {
  switch (k) {
    case ForKind::Serial:
      return "serial";
    case ForKind::Parallel:
      return "parallel";
    case ForKind::Vectorized:
      return "vectorized";
    case ForKind::Unrolled:
      return "unrolled";
    case ForKind::GpuBlock:
      return "gpu_block";
    case ForKind::GpuThread:
      return "gpu_thread";
    case ForKind::GpuCooperative:
      return "gpu_cooperative";
    case ForKind::GpuGridStride:
      return "gpu_grid_stride";
  }
  return "?";
}

std::string_view scope_name(MemoryScope s) {
  switch (s) {
    case MemoryScope::Global:
      return "global";
    case MemoryScope::Stack:
      return "stack";
    case MemoryScope::Scratch:
      return "scratch";
    case MemoryScope::Shared:
      return "shared";
    case MemoryScope::Local:
      return "local";
  }
  return "?";
}

std::string_view launch_kind_name(LaunchKind k) {
  switch (k) {
    case LaunchKind::Single:
      return "single";
    case LaunchKind::GridStride:
      return "grid_stride";
    case LaunchKind::Grid:
      return "grid";
  }
  return "?";
}

std::string_view all_reduce_form_name(AllReduceForm f) {
  switch (f) {
    case AllReduceForm::Tree:
      return "tree";
    case AllReduceForm::Shuffles:
      return "shuffles";
    case AllReduceForm::ShufflesOrTree:
      return "shuffles_or_tree";
  }
  return "?";
}

namespace {

std::string type_text(ScalarType t) { return std::string(ir::scalar_type_name(t)); }

std::string float_text(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  std::string s = buf;
  if (s.find_first_of(".e") == std::string::npos) s += ".0";
  return s;
}

std::string args_text(const std::vector<ExprP>& args) {
  std::string s;
  for (size_t i = 0; i < args.size(); ++i) s += (i ? ", " : "") + to_string(*args[i]);
  return s;
}

std::string dims_text(const std::array<int64_t, 3>& d) {
  return std::to_string(d[0]) + " x " + std::to_string(d[1]) + " x " + std::to_string(d[2]);
}

// "grid 4 x 1 x 1 blocks of 128 x 1 x 1 threads", "grid_stride i, j in [R, C] by 256 threads", "single"
std::string launch_text(const Launch& l) {
  switch (l.kind) {
    case LaunchKind::Single:
      return "single";
    case LaunchKind::GridStride: {
      std::string vars;
      for (size_t i = 0; i < l.loops.size(); ++i) vars += (i ? ", " : "") + l.loops[i];
      return "grid_stride " + vars + " in [" + args_text(l.extents) + "] by " +
             std::to_string(l.geometry.block[0]) + " threads, at most " + std::to_string(l.max_blocks) + " blocks";
    }
    case LaunchKind::Grid: {
      std::string s = "grid " + dims_text(l.geometry.grid) + " blocks of " + dims_text(l.geometry.block) + " threads";
      if (l.geometry.shared_bytes > 0) s += ", " + std::to_string(l.geometry.shared_bytes) + " shared bytes";
      return s;
    }
  }
  return "?";
}

}  // namespace

std::string to_string(const Expr& e) {
  switch (e.kind) {
    case ExprKind::IntImm:
      if (e.type == ScalarType::Bool) return e.int_value ? "true" : "false";
      if (e.type == ScalarType::Index) return std::to_string(e.int_value);
      return std::to_string(e.int_value) + ":" + type_text(e.type);
    case ExprKind::FloatImm:
      return float_text(e.float_value) + ":" + type_text(e.type);
    case ExprKind::Var:
      return e.name;
    case ExprKind::Load: {
      std::string s = e.name;
      if (e.boundary == ir::Boundary::Pad)
        s = "pad(" + s + ", " + to_string(*e.pad) + ")";
      else if (e.boundary != ir::Boundary::None)
        s = std::string(ir::boundary_name(e.boundary)) + "(" + s + ")";
      return s + "[" + args_text(e.args) + "]";
    }
    case ExprKind::Unary:
      return std::string(e.un_op == UnOp::Neg ? "-" : "!") + to_string(*e.args[0]);
    case ExprKind::Binary: {
      std::string op(bin_op_text(e.bin_op));
      if (e.bin_op == BinOp::Min || e.bin_op == BinOp::Max || e.bin_op == BinOp::TruncDiv ||
          e.bin_op == BinOp::TruncMod)
        return op + "(" + args_text(e.args) + ")";
      return "(" + to_string(*e.args[0]) + " " + op + " " + to_string(*e.args[1]) + ")";
    }
    case ExprKind::Select:
      return "select(" + args_text(e.args) + ")";
    case ExprKind::Call:
      return std::string(intrinsic_name(e.intrinsic)) + "(" + args_text(e.args) + ")";
    case ExprKind::Cast:
      return std::string(e.saturate ? "sat" : "cast") + "<" + type_text(e.type) + ">(" +
             to_string(*e.args[0]) + ")";
    case ExprKind::Reduce: {
      std::string s = std::string(ir::reduce_op_name(e.reduce_op)) + "(";
      for (size_t i = 0; i < e.ranges.size(); ++i) {
        const Range& r = e.ranges[i];
        s += (i ? ", " : "") + r.var + " in [" + to_string(*r.min) + ", +" + to_string(*r.extent) + ")";
      }
      return s + ": " + to_string(*e.args[0]) + ")";
    }
  }
  return "?";
}

std::string to_string(const Stmt& s, int indent) {
  std::string pad(static_cast<size_t>(indent), ' ');
  auto nested = [&](const StmtP& b) { return b ? to_string(*b, indent + 2) : std::string(); };
  switch (s.kind) {
    case StmtKind::For: {
      std::string kind = s.for_kind == ForKind::Serial ? "" : " " + std::string(for_kind_name(s.for_kind));
      if (s.for_kind == ForKind::GpuBlock || s.for_kind == ForKind::GpuThread) kind += "." + std::string(1, "xyz"[s.gpu_axis]);
      if (!s.cooperative.name.empty()) {
        kind += " " + s.cooperative.name;
        if (s.cooperative.lanes > 1)
          kind += " by " + std::to_string(s.cooperative.lanes) + (s.cooperative.vector_store ? " (vector stores)" : "");
      }
      return pad + "for " + s.name + " in [" + to_string(*s.min) + ", +" + to_string(*s.extent) + ")" + kind +
             " {\n" + nested(s.body) + pad + "}\n";
    }
    case StmtKind::Barrier:
      return pad + "barrier\n";
    case StmtKind::Prefetch:
      return pad + "prefetch " + s.name + "[" + args_text(s.indices) + "] + " + std::to_string(s.byte_offset) +
             " bytes\n";
    case StmtKind::Kernel:
      return pad + "kernel " + s.name + " " + launch_text(s.launch) + " {\n" + nested(s.body) + pad + "}\n";
    case StmtKind::ThreadAllReduce: {
      std::string out = pad + "all_reduce." + std::string(1, "xyz"[s.gpu_axis]) + " " +
                        std::string(all_reduce_form_name(s.form)) + " ";
      for (size_t i = 0; i < s.combines.size(); ++i) {
        const Stmt::Combine& c = s.combines[i];
        out += (i ? ", " : "") + c.var + " " + std::string(bin_op_text(c.op)) + " via " + c.slots;
      }
      return out + "\n";
    }
    case StmtKind::Store:
      return pad + s.name + "[" + args_text(s.indices) + "] = " + to_string(*s.value) + "\n";
    case StmtKind::Assign:
      return pad + s.name + " = " + to_string(*s.value) + "\n";
    case StmtKind::LetStmt:
      return pad + "let " + s.name + ": " + type_text(s.type) + " = " + to_string(*s.value) + "\n" +
             to_string(*s.body, indent);
    case StmtKind::DeclareVar:
      return pad + "var " + s.name + ": " + type_text(s.type) + " = " + to_string(*s.value) + "\n" +
             to_string(*s.body, indent);
    case StmtKind::Block: {
      std::string out;
      for (const auto& b : s.stmts) out += to_string(*b, indent);
      return out;
    }
    case StmtKind::IfThenElse: {
      std::string out = pad + "if " + to_string(*s.value) + " {\n" + nested(s.body);
      if (s.else_body) out += pad + "} else {\n" + nested(s.else_body);
      return out + pad + "}\n";
    }
    case StmtKind::Allocate: {
      std::string where(scope_name(s.scope));
      if (s.scope == MemoryScope::Scratch) where += " +" + std::to_string(s.scratch_offset);
      if (s.alignment > 0) where += " aligned " + std::to_string(s.alignment);
      return pad + "allocate " + s.name + ": " + type_text(s.type) + "[" + to_string(*s.extent) + "] in " +
             where + "\n" + to_string(*s.body, indent);
    }
  }
  return pad + "?\n";
}

std::string to_string(const Func& f) {
  std::string out = "func " + f.name + "(";
  bool first = true;
  for (const Buffer& b : f.buffers) {
    if (b.role == BufferRole::Temp) continue;
    std::string shape;
    for (size_t d = 0; d < b.shape.size(); ++d) shape += (d ? ", " : "") + std::to_string(b.shape[d]);
    out += std::string(first ? "" : ", ") + (b.role == BufferRole::Input ? "in " : "out ") + b.name + ": " +
           type_text(b.type) + "[" + shape + "]";
    first = false;
  }
  for (const Param& p : f.params) {
    out += std::string(first ? "" : ", ") + p.name + " = " + std::to_string(p.value);
    first = false;
  }
  out += ")";
  if (f.scratch_bytes > 0) out += " scratch " + std::to_string(f.scratch_bytes) + " bytes";
  out += " {\n";
  if (f.body) out += to_string(*f.body, 2);
  return out + "}\n";
}

}  // namespace ekb::lir
