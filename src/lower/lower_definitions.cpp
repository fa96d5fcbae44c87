#include "lower/lower_definitions.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <stdexcept>

#include "lir/mutator.h"

namespace ekb::lower {

using namespace lir;

const std::set<std::string>& reserved_identifiers() {
  static const std::set<std::string> names = [] {
    std::set<std::string> s = {
        // C and C++ keywords
        "auto", "break", "case", "char", "const", "continue", "default", "do", "double", "else", "enum",
        "extern", "float", "for", "goto", "if", "inline", "int", "long", "register", "restrict", "return",
        "short", "signed", "sizeof", "static", "struct", "switch", "typedef", "union", "unsigned", "void",
        "volatile", "while", "bool", "true", "false", "class", "namespace", "template", "typename", "this",
        "new", "delete", "operator", "private", "protected", "public", "virtual", "friend", "using", "try",
        "catch", "throw", "and", "or", "not", "xor", "asm", "explicit", "mutable", "export", "nullptr",
        "constexpr", "decltype", "noexcept", "static_assert", "alignas", "alignof",
        // types and macros the emitted code names
        "int8_t", "uint8_t", "int16_t", "uint16_t", "int32_t", "uint32_t", "int64_t", "uint64_t", "size_t",
        "INFINITY", "NAN", "NULL", "scratch", "stream",
        // OpenCL and CUDA
        "kernel", "global", "local", "constant", "private", "half", "uchar", "ushort", "uint", "ulong",
        "threadIdx", "blockIdx", "blockDim", "gridDim", "dim3", "warpSize",
        // C math library (double and float forms)
        "exp", "log", "log2", "exp2", "sqrt", "tanh", "erf", "sin", "cos", "tan", "atan", "atan2", "pow",
        "floor", "ceil", "round", "rint", "trunc", "fma", "fabs", "abs", "fmin", "fmax", "min", "max",
        "clamp", "select", "rsqrt", "main"};
    std::vector<std::string> f;
    for (const auto& n :
         {"exp",   "log", "log2",  "exp2", "sqrt",  "tanh", "erf",   "sin", "cos",  "tan",  "atan",
          "atan2", "pow", "floor", "ceil", "round", "rint", "trunc", "fma", "fabs", "fmin", "fmax"})
      s.insert(std::string(n) + "f");
    return s;
  }();
  return names;
}

namespace {

using ir::Boundary;
using ir::ExprKind;

BufferRole role_of(ir::TensorRole r) {
  switch (r) {
    case ir::TensorRole::Input:
      return BufferRole::Input;
    case ir::TensorRole::Output:
      return BufferRole::Output;
    case ir::TensorRole::Temp:
      return BufferRole::Temp;
  }
  return BufferRole::Temp;
}

std::optional<Intrinsic> float_intrinsic(const std::string& n) {
  static const std::pair<const char*, Intrinsic> table[] = {
      {"exp", Intrinsic::Exp},
      {"log", Intrinsic::Log},
      {"log2", Intrinsic::Log2},
      {"exp2", Intrinsic::Exp2},
      {"sqrt", Intrinsic::Sqrt},
      {"rsqrt", Intrinsic::Rsqrt},
      {"tanh", Intrinsic::Tanh},
      {"erf", Intrinsic::Erf},
      {"sin", Intrinsic::Sin},
      {"cos", Intrinsic::Cos},
      {"tan", Intrinsic::Tan},
      {"atan", Intrinsic::Atan},
      {"atan2", Intrinsic::Atan2},
      {"sigmoid", Intrinsic::Sigmoid},
      {"pow", Intrinsic::Pow},
      {"floor", Intrinsic::Floor},
      {"ceil", Intrinsic::Ceil},
      {"round", Intrinsic::Round},
      {"round_even", Intrinsic::RoundEven},
      {"trunc", Intrinsic::Trunc},
  };
  for (const auto& [name, f] : table)
    if (n == name) return f;
  return std::nullopt;
}

BinOp bin_op_of(ir::BinaryOp op) {
  switch (op) {
    case ir::BinaryOp::Or:
      return BinOp::Or;
    case ir::BinaryOp::And:
      return BinOp::And;
    case ir::BinaryOp::Eq:
      return BinOp::Eq;
    case ir::BinaryOp::Ne:
      return BinOp::Ne;
    case ir::BinaryOp::Lt:
      return BinOp::Lt;
    case ir::BinaryOp::Le:
      return BinOp::Le;
    case ir::BinaryOp::Gt:
      return BinOp::Gt;
    case ir::BinaryOp::Ge:
      return BinOp::Ge;
    case ir::BinaryOp::BitOr:
      return BinOp::BitOr;
    case ir::BinaryOp::BitXor:
      return BinOp::BitXor;
    case ir::BinaryOp::BitAnd:
      return BinOp::BitAnd;
    case ir::BinaryOp::Shl:
      return BinOp::Shl;
    case ir::BinaryOp::Shr:
      return BinOp::Shr;
    case ir::BinaryOp::Add:
      return BinOp::Add;
    case ir::BinaryOp::Sub:
      return BinOp::Sub;
    case ir::BinaryOp::Mul:
      return BinOp::Mul;
    case ir::BinaryOp::Div:
      return BinOp::Div;
    case ir::BinaryOp::Mod:
      return BinOp::Mod;
  }
  return BinOp::Add;
}

class DefinitionLowerer {
 public:
  explicit DefinitionLowerer(const ir::Instance& inst) : inst_(inst) {}

  Func run() {
    const ir::Pattern& p = inst_.pattern();
    f_.name = "ekb_main";
    f_.source = &inst_;
    f_.names = reserved_identifiers();
    for (BufferRole role : {BufferRole::Input, BufferRole::Output, BufferRole::Temp})
      for (const ir::TensorInstance& t : inst_.tensors)
        if (role_of(t.decl->role) == role) {
          f_.buffers.push_back({t.decl->name, t.type, t.shape, role});
          f_.names.insert(t.decl->name);
        }
    for (const ir::Ident& prm : p.params) {
      f_.params.push_back({prm.name, inst_.params.at(prm.name)});
      f_.names.insert(prm.name);
    }

    std::vector<StmtP> body;
    const std::vector<bool> pure = ir::pure_definitions(inst_, p.stmts);
    for (size_t i = 0; i < p.stmts.size(); ++i)
      body.push_back(pure[i] ? pure_definition(p.stmts[i]) : update(p.stmts[i]));
    StmtP all = make_block(std::move(body));
    // Temps live for the whole kernel; plan_storage decides where.
    for (auto it = f_.buffers.rbegin(); it != f_.buffers.rend(); ++it)
      if (it->role == BufferRole::Temp)
        all = make_allocate(it->name, it->type, it->num_elements(), MemoryScope::Global, all);
    f_.body = all;
    return std::move(f_);
  }

 private:
  // ---- statements
  bool is_constant_name(const std::string& n) const { return inst_.params.count(n) || inst_.lets.count(n); }

  StmtP pure_definition(const ir::Stmt& s) {
    const Buffer& b = buffer(s.tensor);
    size_t mark = scope_.size();
    begin_stage(s.tensor, s.tensor, false);
    std::vector<std::string> vars;
    for (const auto& ix : s.indices) {
      vars.push_back(bind(ix->name));
      record_loop(ix->name, vars.back(), LoopRole::Pure);
    }
    std::vector<ExprP> idx;
    for (const auto& v : vars) idx.push_back(var(v, ScalarType::Index));
    StmtP st = make_store(b.name, idx, as_type(*s.value, b.type));
    for (size_t d = vars.size(); d-- > 0;) st = make_for(vars[d], index_imm(0), index_imm(b.shape[d]), st);
    scope_.resize(mark);
    stage_ = std::nullopt;
    return st;
  }

  StmtP update(const ir::Stmt& s) {
    size_t mark = scope_.size();
    StmtP out;
    if (s.kind == ir::StmtKind::For) {
      out = ranged_loops(s.ranges, 0, s);
    } else {
      const Buffer& b = buffer(s.tensor);
      int n = update_count_[s.tensor]++;
      begin_stage(s.tensor + ".update(" + std::to_string(n) + ")", s.tensor, true);
      for (const auto& [ir_name, v] : ordered_) record_loop(ir_name, v, LoopRole::Ordered);
      // Free left-hand-side variables: innermost, in index order, over the full extent.
      std::vector<std::pair<std::string, int64_t>> free;
      for (size_t d = 0; d < s.indices.size(); ++d) {
        const ir::Expr& ix = *s.indices[d];
        if (ix.kind == ExprKind::Name && !lookup(ix.name) && !is_constant_name(ix.name)) {
          free.emplace_back(bind(ix.name), b.shape[d]);
          record_loop(ix.name, free.back().first, LoopRole::Free);
        }
      }
      std::vector<ExprP> idx;
      for (const auto& ix : s.indices) idx.push_back(as_type(*ix, ScalarType::Index));
      out = make_store(b.name, idx, as_type(*s.value, b.type));
      for (size_t k = free.size(); k-- > 0;)
        out = make_for(free[k].first, index_imm(0), index_imm(free[k].second), out);
      stage_ = std::nullopt;
    }
    scope_.resize(mark);
    return out;
  }

  // `for r0, r1, ...: body` as nested loops, ranges[k] outermost of the rest.
  StmtP ranged_loops(const std::vector<ir::Range>& ranges, size_t k, const ir::Stmt& s) {
    if (k == ranges.size()) {
      std::vector<StmtP> body;
      for (const ir::Stmt& b : s.body) body.push_back(update(b));
      return make_block(std::move(body));
    }
    const ir::Range& r = ranges[k];
    ExprP lo = as_type(*r.lo, ScalarType::Index);
    ExprP hi = as_type(*r.hi, ScalarType::Index);
    // Bounds are evaluated once, at loop entry: a bound that reads a tensor the body may write is
    // bound to a variable first.
    std::vector<std::pair<std::string, ExprP>> lets;
    for (ExprP* bound : {&lo, &hi})
      if (has_load(**bound)) {
        std::string n = f_.fresh_name(r.var + (bound == &lo ? "_lo" : "_hi"));
        lets.emplace_back(n, *bound);
        *bound = var(n, ScalarType::Index);
      }
    std::string v = bind(r.var);
    ordered_.emplace_back(r.var, v);
    StmtP inner = ranged_loops(ranges, k + 1, s);
    ordered_.pop_back();
    StmtP loop = make_for(v, lo, binary(BinOp::Sub, hi, lo), inner);
    for (auto it = lets.rbegin(); it != lets.rend(); ++it) loop = make_let(it->first, it->second, loop);
    return loop;
  }

  // ---- expressions
  ScalarType ty(const ir::Expr& e) const {
    auto it = inst_.expr_types.find(&e);
    if (it != inst_.expr_types.end()) return it->second;
    switch (e.kind) {
      case ExprKind::IntLit:
        return ScalarType::Index;
      case ExprKind::FloatLit:
        return ScalarType::F64;
      case ExprKind::BoolLit:
        return ScalarType::Bool;
      default:
        throw std::logic_error("lower_definitions: expression without a type (unverified instance?)");
    }
  }

  static ExprP convert(ExprP x, ScalarType t) {
    if (x->type == t) return x;
    return cast(t, std::move(x));
  }

  ExprP as_type(const ir::Expr& e, ScalarType t) { return convert(expr(e), t); }

  ExprP expr(const ir::Expr& e) {
    ScalarType t = ty(e);
    switch (e.kind) {
      case ExprKind::IntLit:
        if (ir::is_float(t)) return float_imm(t, static_cast<double>(e.int_value));
        return int_imm(t, ir::wrap_int(t, e.int_value));
      case ExprKind::FloatLit:
        if (ir::is_float(t)) return float_imm(t, e.float_value);
        return cast(t, float_imm(ScalarType::F64, e.float_value));
      case ExprKind::BoolLit:
        return bool_imm(e.bool_value);
      case ExprKind::Name:
        return name(e, t);
      case ExprKind::Access:
        return access(e);
      case ExprKind::Unary:
        if (e.unary_op == ir::UnaryOp::Not) return unary(UnOp::Not, as_type(*e.args[0], ScalarType::Bool));
        return unary(UnOp::Neg, as_type(*e.args[0], t));
      case ExprKind::Binary:
        return binary_expr(e, t);
      case ExprKind::Call:
        return call_expr(e, t);
      case ExprKind::Cast: {
        ExprP v = expr(*e.args[0]);
        if (v->type == t) return v;
        return cast(t, v, e.saturating);
      }
      case ExprKind::Reduce:
        return reduce(e, t);
    }
    throw std::logic_error("lower_definitions: unknown expression kind");
  }

  ExprP name(const ir::Expr& e, ScalarType t) {
    if (const std::string* v = lookup(e.name)) return var(*v, ScalarType::Index);
    if (auto it = inst_.params.find(e.name); it != inst_.params.end()) return index_imm(it->second);
    if (auto it = inst_.lets.find(e.name); it != inst_.lets.end()) {
      if (it->second.is_float)
        return float_imm(ir::is_float(t) ? t : ScalarType::F64, it->second.float_value);
      return convert(index_imm(it->second.int_value), t);
    }
    throw std::logic_error("lower_definitions: unknown name '" + e.name + "'");
  }

  ExprP access(const ir::Expr& e) {
    const Buffer& b = buffer(e.name);
    std::vector<ExprP> idx;
    for (const auto& a : e.args) idx.push_back(as_type(*a, ScalarType::Index));
    auto l = std::make_shared<Expr>(*load(b.name, b.type, std::move(idx)));
    l->boundary = e.boundary;
    if (e.boundary == Boundary::Pad) l->pad = as_type(*e.pad_value, b.type);
    return l;
  }

  ExprP binary_expr(const ir::Expr& e, ScalarType t) {
    BinOp op = bin_op_of(e.binary_op);
    const ir::Expr& a = *e.args[0];
    const ir::Expr& b = *e.args[1];
    if (op == BinOp::And || op == BinOp::Or)
      return binary(op, as_type(a, ScalarType::Bool), as_type(b, ScalarType::Bool));
    if (is_comparison(op)) {
      ScalarType ta = ty(a), tb = ty(b);
      ScalarType common = ta == tb                                               ? ta
                          : (ta == ScalarType::Index || tb == ScalarType::Index) ? ScalarType::Index
                                                                                 : ta;
      return binary(op, as_type(a, common), as_type(b, common));
    }
    return binary(op, as_type(a, t), as_type(b, t));
  }

  ExprP call_expr(const ir::Expr& e, ScalarType t) {
    const std::string& n = e.name;
    auto arg = [&](size_t i, ScalarType at) { return as_type(*e.args[i], at); };
    if (n == "select") return select(arg(0, ScalarType::Bool), arg(1, t), arg(2, t));
    if (n == "min") return binary(BinOp::Min, arg(0, t), arg(1, t));
    if (n == "max") return binary(BinOp::Max, arg(0, t), arg(1, t));
    // clamp(x, lo, hi) = min(max(x, lo), hi), exactly as the reference evaluates it.
    if (n == "clamp") return binary(BinOp::Min, binary(BinOp::Max, arg(0, t), arg(1, t)), arg(2, t));
    if (n == "abs") return call(Intrinsic::Abs, t, {arg(0, t)});
    if (n == "fma") {
      if (ir::is_float(t)) return call(Intrinsic::Fma, t, {arg(0, t), arg(1, t), arg(2, t)});
      return binary(BinOp::Add, binary(BinOp::Mul, arg(0, t), arg(1, t)), arg(2, t));
    }
    if (n == "rdmulh" || n == "rshift" || n == "requant") {
      Intrinsic f = n == "rdmulh"   ? Intrinsic::Rdmulh
                    : n == "rshift" ? Intrinsic::Rshift
                                    : Intrinsic::Requant;
      std::vector<ExprP> args;
      for (size_t i = 0; i < e.args.size(); ++i) args.push_back(arg(i, ScalarType::I32));
      return call(f, ScalarType::I32, std::move(args));
    }
    if (auto f = float_intrinsic(n)) {
      // floor, ceil, round, ... of an integer: integers are already integral.
      if (!ir::is_float(t)) return arg(0, t);
      std::vector<ExprP> args;
      for (size_t i = 0; i < e.args.size(); ++i) args.push_back(arg(i, t));
      return call(*f, t, std::move(args));
    }
    throw std::logic_error("lower_definitions: unknown intrinsic '" + n + "'");
  }

  ExprP reduce(const ir::Expr& e, ScalarType t) {
    size_t mark = scope_.size();
    auto r = std::make_shared<Expr>();
    r->kind = lir::ExprKind::Reduce;
    r->type = t;
    r->reduce_op = e.reduce_op;
    for (const ir::Range& rg : e.ranges) {
      ExprP lo = as_type(*rg.lo, ScalarType::Index);
      ExprP hi = as_type(*rg.hi, ScalarType::Index);
      r->ranges.push_back({bind(rg.var), lo, binary(BinOp::Sub, hi, lo)});
      record_loop(rg.var, r->ranges.back().var, LoopRole::Reduction);
    }
    r->body_type = ty(*e.args[0]);
    r->args = {expr(*e.args[0])};
    scope_.resize(mark);
    return r;
  }

  // ---- stages (the names the schedule layer uses)
  void begin_stage(std::string name, std::string tensor, bool is_update) {
    f_.stages.push_back({std::move(name), std::move(tensor), is_update, {}});
    stage_ = f_.stages.size() - 1;
  }

  // A loop of the current stage; a name used twice (two reductions over `k`) has two copies.
  void record_loop(const std::string& ir_name, const std::string& v, LoopRole role) {
    if (!stage_) return;
    Stage& st = f_.stages[*stage_];
    if (StageLoop* l = st.loop(ir_name)) l->vars.push_back(v);
    else st.loops.push_back({ir_name, role, {v}});
  }

  // ---- names
  std::string bind(const std::string& ir_name) {
    std::string v = f_.fresh_name(ir_name.rfind("ekb_", 0) == 0 ? "v_" + ir_name : ir_name);
    scope_.emplace_back(ir_name, v);
    return v;
  }

  const std::string* lookup(const std::string& ir_name) const {
    for (auto it = scope_.rbegin(); it != scope_.rend(); ++it)
      if (it->first == ir_name) return &it->second;
    return nullptr;
  }

  const Buffer& buffer(const std::string& n) const {
    const Buffer* b = f_.buffer(n);
    if (!b) throw std::logic_error("lower_definitions: unknown tensor '" + n + "'");
    return *b;
  }

  const ir::Instance& inst_;
  Func f_;
  std::vector<std::pair<std::string, std::string>> scope_;  // IR variable -> loop IR variable
  std::vector<std::pair<std::string, std::string>> ordered_;  // enclosing update `for` ranges
  std::optional<size_t> stage_;                              // the stage being lowered
  std::map<std::string, int> update_count_;
};

}  // namespace

Func lower_definitions(const ir::Instance& inst) { return DefinitionLowerer(inst).run(); }

}  // namespace ekb::lower
