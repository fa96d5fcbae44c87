// Compilation of expressions into node trees for the reference interpreter.
// Reference values must not depend on the compiler's FMA contraction (clang contracts a * b + c
// by default on FMA targets); GCC in ISO mode (-std=c++20) does not contract.
#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#endif
#include "ir/interp_compile.h"

#include <algorithm>
#include <stdexcept>

#include "ir/interp_ops.h"

namespace ekb::ir::interp {

void raise(const ErrCtx* ctx, SourceLoc loc, const std::string& msg) {
  std::string s;
  if (ctx && !ctx->file.empty()) s += ctx->file + ":";
  s += std::to_string(loc.line) + ":" + std::to_string(loc.col) + ": reference error";
  if (ctx && !ctx->where.empty()) s += " in " + ctx->where;
  s += ": " + msg;
  throw std::runtime_error(s);
}

std::string Addr::describe() const {
  std::string s = buf ? buf->name : "?";
  s += "[";
  for (size_t d = 0; d < dims.size(); ++d) s += (d ? ", " : "") + std::to_string(dims[d].index());
  s += "] (shape [";
  for (size_t d = 0; d < dims.size(); ++d) s += (d ? ", " : "") + std::to_string(dims[d].ext);
  return s + "])";
}

void LoadBase::oob() const { raise(err, loc, "read out of bounds: " + addr.describe()); }

Compiler::Compiler(const Instance& inst, std::vector<Buf>& bufs, std::deque<int64_t>& slots,
                   const ErrCtx* err)
    : inst_(inst), bufs_(bufs), slots_(slots), err_(err) {}

int64_t* Compiler::new_slot() {
  slots_.push_back(0);
  return &slots_.back();
}

void Compiler::fail(SourceLoc loc, const std::string& msg) const { raise(err_, loc, msg); }

ScalarType Compiler::ty(const Expr& e) const {
  auto it = inst_.expr_types.find(&e);
  if (it != inst_.expr_types.end()) return it->second;
  switch (e.kind) {
    case ExprKind::IntLit: return ScalarType::Index;
    case ExprKind::FloatLit: return ScalarType::F64;
    case ExprKind::BoolLit: return ScalarType::Bool;
    default: fail(e.loc, "internal: expression has no type (was the instance verified?)");
  }
}

int64_t* Compiler::find_var(const std::string& name) const {
  for (auto it = scope.rbegin(); it != scope.rend(); ++it)
    if (it->first == name) return it->second;
  return nullptr;
}

const Buf& Compiler::buf(const std::string& name, SourceLoc loc) const {
  for (const Buf& b : bufs_)
    if (b.name == name) return b;
  fail(loc, "tensor '" + name + "' is not available here");
}

bool Compiler::is_const(const Expr& e) {
  auto it = const_memo_.find(&e);
  if (it != const_memo_.end()) return it->second;
  bool c = true;
  switch (e.kind) {
    case ExprKind::IntLit:
    case ExprKind::FloatLit:
    case ExprKind::BoolLit: c = true; break;
    case ExprKind::Name: c = find_var(e.name) == nullptr; break;
    case ExprKind::Access:
    case ExprKind::Reduce: c = false; break;
    default:
      for (const auto& a : e.args) c = c && is_const(*a);
  }
  const_memo_[&e] = c;
  return c;
}

bool Compiler::const_int(const Expr& e, int64_t& v) {
  if (!is_const(e) || is_float(ty(e))) return false;
  try {
    v = ci(e)->eval();
    return true;
  } catch (const std::exception&) {
    return false;
  }
}

// Adds scale * e to c0 + terms when e is an index expression affine in the variables.
bool Compiler::affine(const Expr& e, uint64_t scale, uint64_t& c0, std::vector<Term>& terms) {
  if (ty(e) != ScalarType::Index) return false;
  switch (e.kind) {
    case ExprKind::IntLit: c0 += scale * static_cast<uint64_t>(e.int_value); return true;
    case ExprKind::Name: {
      if (int64_t* v = find_var(e.name)) {
        for (Term& t : terms)
          if (t.var == v) {
            t.coef = static_cast<int64_t>(static_cast<uint64_t>(t.coef) + scale);
            return true;
          }
        terms.push_back({v, static_cast<int64_t>(scale)});
        return true;
      }
      break;
    }
    case ExprKind::Unary:
      if (e.unary_op == UnaryOp::Neg) return affine(*e.args[0], 0 - scale, c0, terms);
      break;
    case ExprKind::Binary: {
      const Expr& a = *e.args[0];
      const Expr& b = *e.args[1];
      if (e.binary_op == BinaryOp::Add) return affine(a, scale, c0, terms) && affine(b, scale, c0, terms);
      if (e.binary_op == BinaryOp::Sub) return affine(a, scale, c0, terms) && affine(b, 0 - scale, c0, terms);
      if (e.binary_op == BinaryOp::Mul) {
        int64_t k;
        if (const_int(a, k)) return affine(b, scale * static_cast<uint64_t>(k), c0, terms);
        if (const_int(b, k)) return affine(a, scale * static_cast<uint64_t>(k), c0, terms);
        return false;
      }
      break;
    }
    default: break;
  }
  int64_t k;
  if (const_int(e, k)) {
    c0 += scale * static_cast<uint64_t>(k);
    return true;
  }
  return false;
}

Addr Compiler::make_addr(const Buf& b, const std::vector<ExprP>& idx, SourceLoc loc) {
  if (idx.size() != b.shape.size())
    fail(loc, "'" + b.name + "' has " + std::to_string(b.shape.size()) + " dimensions, not " +
                  std::to_string(idx.size()));
  Addr a;
  a.buf = &b;
  for (size_t d = 0; d < idx.size(); ++d) {
    Dim dim;
    dim.ext = b.shape[d];
    dim.stride = b.strides[d];
    uint64_t c0 = 0;
    std::vector<Term> terms;
    if (affine(*idx[d], 1, c0, terms)) {
      std::vector<Term> nz;
      for (const Term& t : terms)
        if (t.coef != 0) nz.push_back(t);
      dim.c0 = static_cast<int64_t>(c0);
      if (nz.size() <= 2) {
        if (nz.size() >= 1) dim.v1 = nz[0].var, dim.a1 = nz[0].coef;
        if (nz.size() == 2) dim.v2 = nz[1].var, dim.a2 = nz[1].coef;
      } else {
        auto g = std::make_unique<IAffine>();
        g->c0 = dim.c0;
        g->terms = std::move(nz);
        a.gens.push_back(std::move(g));
        dim.gen = a.gens.back().get();
        a.all_affine = false;
      }
    } else {
      a.gens.push_back(as_i(*idx[d]));
      dim.gen = a.gens.back().get();
      a.all_affine = false;
    }
    a.dims.push_back(dim);
  }
  return a;
}

// ------------------------------------------------------------------ expressions
static bool foldable(const Expr& e) {
  return e.kind == ExprKind::Unary || e.kind == ExprKind::Binary || e.kind == ExprKind::Call ||
         e.kind == ExprKind::Cast;
}

FP Compiler::as_f(const Expr& e) {
  if (is_float(ty(e))) return cf(e);
  return std::make_unique<FFromI>(ci(e));
}

IP Compiler::as_i(const Expr& e) {
  if (!is_float(ty(e))) return ci(e);
  auto n = std::make_unique<IFromF>();
  n->a = cf(e);
  n->lo = int_min(ScalarType::I64);
  n->hi = int_max(ScalarType::I64);
  return n;
}

FP Compiler::cf(const Expr& e) {
  FP n = cf_raw(e);
  if (foldable(e) && is_const(e)) {
    try {
      return std::make_unique<FConst>(n->eval());
    } catch (const std::exception&) {  // e.g. a constant division by zero: fails if reached
    }
  }
  return n;
}

IP Compiler::ci(const Expr& e) {
  IP n = ci_raw(e);
  if (foldable(e) && is_const(e)) {
    try {
      return std::make_unique<IConst>(n->eval());
    } catch (const std::exception&) {
    }
  }
  return n;
}

FP Compiler::cf_raw(const Expr& e) {
  switch (e.kind) {
    case ExprKind::IntLit: return std::make_unique<FConst>(static_cast<double>(e.int_value));
    case ExprKind::FloatLit: return std::make_unique<FConst>(e.float_value);
    case ExprKind::BoolLit: return std::make_unique<FConst>(e.bool_value ? 1.0 : 0.0);
    case ExprKind::Name: {
      if (int64_t* v = find_var(e.name)) return std::make_unique<FFromI>(std::make_unique<IVar>(v));
      if (auto it = inst_.params.find(e.name); it != inst_.params.end())
        return std::make_unique<FConst>(static_cast<double>(it->second));
      if (auto it = inst_.lets.find(e.name); it != inst_.lets.end())
        return std::make_unique<FConst>(it->second.as_double());
      fail(e.loc, "unknown name '" + e.name + "'");
    }
    case ExprKind::Access: return load_f(e);
    case ExprKind::Unary:
      if (e.unary_op == UnaryOp::Neg) return std::make_unique<FNeg>(as_f(*e.args[0]));
      break;
    case ExprKind::Binary: {
      FP a = as_f(*e.args[0]);
      FP b = as_f(*e.args[1]);
      switch (e.binary_op) {
        case BinaryOp::Add: return std::make_unique<FBin<OpFAdd>>(std::move(a), std::move(b));
        case BinaryOp::Sub: return std::make_unique<FBin<OpFSub>>(std::move(a), std::move(b));
        case BinaryOp::Mul: return std::make_unique<FBin<OpFMul>>(std::move(a), std::move(b));
        case BinaryOp::Div: return std::make_unique<FBin<OpFDiv>>(std::move(a), std::move(b));
        case BinaryOp::Mod: return std::make_unique<FBin<OpFMod>>(std::move(a), std::move(b));
        default: break;
      }
      break;
    }
    case ExprKind::Call: return call_f(e);
    case ExprKind::Cast: return as_f(*e.args[0]);  // to a float type: no rounding in the reference
    case ExprKind::Reduce:
      if (e.reduce_op == ReduceOp::Argmax || e.reduce_op == ReduceOp::Argmin)
        return std::make_unique<FFromI>(reduce_i(e));
      return reduce_f(e);
  }
  fail(e.loc, "internal: this operation has no float form");
}

IP Compiler::ci_raw(const Expr& e) {
  ScalarType t = ty(e);
  WrapInfo w = WrapInfo::of(t);
  switch (e.kind) {
    case ExprKind::IntLit: return std::make_unique<IConst>(wrap_int(t, e.int_value));
    case ExprKind::FloatLit:
      return std::make_unique<IConst>(float_to_int(e.float_value, int_min(t), int_max(t)));
    case ExprKind::BoolLit: return std::make_unique<IConst>(e.bool_value);
    case ExprKind::Name: {
      if (int64_t* v = find_var(e.name)) return std::make_unique<IVar>(v);
      if (auto it = inst_.params.find(e.name); it != inst_.params.end())
        return std::make_unique<IConst>(it->second);
      if (auto it = inst_.lets.find(e.name); it != inst_.lets.end()) {
        if (it->second.is_float) fail(e.loc, "float let '" + e.name + "' used as an integer");
        return std::make_unique<IConst>(it->second.int_value);
      }
      fail(e.loc, "unknown name '" + e.name + "'");
    }
    case ExprKind::Access: return load_i(e);
    case ExprKind::Unary: {
      if (e.unary_op == UnaryOp::Not) {
        auto n = std::make_unique<INot>();
        n->a = as_i(*e.args[0]);
        return n;
      }
      auto n = std::make_unique<INeg>();
      n->a = as_i(*e.args[0]);
      n->w = w;
      return n;
    }
    case ExprKind::Binary: return binary_i(e);
    case ExprKind::Call: return call_i(e);
    case ExprKind::Cast: {
      const Expr& a = *e.args[0];
      ScalarType s = ty(a);
      if (is_float(s)) {
        auto n = std::make_unique<IFromF>();
        n->a = cf(a);
        n->to_bool = t == ScalarType::Bool;
        n->lo = int_min(t);
        n->hi = int_max(t);
        return n;
      }
      IP x = ci(a);
      if (t == ScalarType::Bool) {
        if (s == ScalarType::Bool) return x;
        return std::make_unique<ICmpI<Cmp::Ne>>(std::move(x), std::make_unique<IConst>(0));
      }
      if (s == ScalarType::Bool || (int_min(t) <= int_min(s) && int_max(s) <= int_max(t)))
        return x;  // widening: the exact value is unchanged
      auto n = std::make_unique<IWrapNode>();
      n->a = std::move(x);
      n->w = w;
      n->sat = e.saturating;
      n->lo = int_min(t);
      n->hi = int_max(t);
      return n;
    }
    case ExprKind::Reduce: return reduce_i(e);
  }
  fail(e.loc, "internal: unknown expression kind");
}

template <class Op>
static IP make_ibin(IP a, IP b, WrapInfo w) {
  switch (w.kind) {
    case WK::None: return std::make_unique<IBin<Op, WK::None>>(std::move(a), std::move(b), w);
    case WK::Signed: return std::make_unique<IBin<Op, WK::Signed>>(std::move(a), std::move(b), w);
    case WK::Unsigned: return std::make_unique<IBin<Op, WK::Unsigned>>(std::move(a), std::move(b), w);
    case WK::Bool: return std::make_unique<IBin<Op, WK::Bool>>(std::move(a), std::move(b), w);
  }
  return nullptr;
}

template <template <Cmp> class N, class P>
static IP make_cmp(BinaryOp op, P a, P b) {
  switch (op) {
    case BinaryOp::Eq: return std::make_unique<N<Cmp::Eq>>(std::move(a), std::move(b));
    case BinaryOp::Ne: return std::make_unique<N<Cmp::Ne>>(std::move(a), std::move(b));
    case BinaryOp::Lt: return std::make_unique<N<Cmp::Lt>>(std::move(a), std::move(b));
    case BinaryOp::Le: return std::make_unique<N<Cmp::Le>>(std::move(a), std::move(b));
    case BinaryOp::Gt: return std::make_unique<N<Cmp::Gt>>(std::move(a), std::move(b));
    default: return std::make_unique<N<Cmp::Ge>>(std::move(a), std::move(b));
  }
}

IP Compiler::binary_i(const Expr& e) {
  const Expr& x = *e.args[0];
  const Expr& y = *e.args[1];
  WrapInfo w = WrapInfo::of(ty(e));
  switch (e.binary_op) {
    case BinaryOp::Eq: case BinaryOp::Ne: case BinaryOp::Lt:
    case BinaryOp::Le: case BinaryOp::Gt: case BinaryOp::Ge:
      if (is_float(ty(x)) || is_float(ty(y))) return make_cmp<ICmpF>(e.binary_op, as_f(x), as_f(y));
      return make_cmp<ICmpI>(e.binary_op, ci(x), ci(y));
    case BinaryOp::And:
    case BinaryOp::Or: {
      auto n = std::make_unique<ILogic>();
      n->a = as_i(x);
      n->b = as_i(y);
      n->is_and = e.binary_op == BinaryOp::And;
      return n;
    }
    case BinaryOp::Add: return make_ibin<OpAdd>(as_i(x), as_i(y), w);
    case BinaryOp::Sub: return make_ibin<OpSub>(as_i(x), as_i(y), w);
    case BinaryOp::Mul: return make_ibin<OpMul>(as_i(x), as_i(y), w);
    case BinaryOp::BitAnd: return make_ibin<OpAnd>(as_i(x), as_i(y), w);
    case BinaryOp::BitOr: return make_ibin<OpOr>(as_i(x), as_i(y), w);
    case BinaryOp::BitXor: return make_ibin<OpXor>(as_i(x), as_i(y), w);
    case BinaryOp::Div: case BinaryOp::Mod: case BinaryOp::Shl: case BinaryOp::Shr: {
      auto n = std::make_unique<IChecked>();
      n->kind = e.binary_op == BinaryOp::Div   ? IChecked::Div
                : e.binary_op == BinaryOp::Mod ? IChecked::Mod
                : e.binary_op == BinaryOp::Shl ? IChecked::Shl
                                               : IChecked::Shr;
      n->a = as_i(x);
      n->b = as_i(y);
      n->w = w;
      n->err = err_;
      n->loc = e.loc;
      return n;
    }
  }
  fail(e.loc, "internal: unknown binary operator");
}

namespace {
using F1 = double (*)(double);
using F2 = double (*)(double, double);
F1 float_fn1(const std::string& n) {
  if (n == "exp") return +[](double x) { return std::exp(x); };
  if (n == "log") return +[](double x) { return std::log(x); };
  if (n == "log2") return +[](double x) { return std::log2(x); };
  if (n == "exp2") return +[](double x) { return std::exp2(x); };
  if (n == "sqrt") return +[](double x) { return std::sqrt(x); };
  if (n == "rsqrt") return +[](double x) { return 1.0 / std::sqrt(x); };
  if (n == "tanh") return +[](double x) { return std::tanh(x); };
  if (n == "erf") return +[](double x) { return std::erf(x); };
  if (n == "sin") return +[](double x) { return std::sin(x); };
  if (n == "cos") return +[](double x) { return std::cos(x); };
  if (n == "tan") return +[](double x) { return std::tan(x); };
  if (n == "atan") return +[](double x) { return std::atan(x); };
  if (n == "sigmoid") return +[](double x) { return 1.0 / (1.0 + std::exp(-x)); };
  if (n == "abs") return +[](double x) { return std::fabs(x); };
  if (n == "floor") return +[](double x) { return std::floor(x); };
  if (n == "ceil") return +[](double x) { return std::ceil(x); };
  if (n == "round") return +[](double x) { return std::round(x); };
  if (n == "round_even") return +[](double x) { return round_half_even(x); };
  if (n == "trunc") return +[](double x) { return std::trunc(x); };
  return nullptr;
}
F2 float_fn2(const std::string& n) {
  if (n == "atan2") return +[](double y, double x) { return std::atan2(y, x); };
  if (n == "pow") return +[](double x, double y) { return std::pow(x, y); };
  return nullptr;
}
}  // namespace

FP Compiler::call_f(const Expr& e) {
  const std::string& n = e.name;
  size_t k = e.args.size();
  auto arg = [&](size_t i) { return as_f(*e.args[i]); };
  if (n == "select" && k == 3) return std::make_unique<FSelect>(as_i(*e.args[0]), arg(1), arg(2));
  if (k == 1)
    if (F1 f = float_fn1(n)) return std::make_unique<FCall1>(f, arg(0));
  if (k == 2) {
    if (F2 f = float_fn2(n)) return std::make_unique<FCall2>(f, arg(0), arg(1));
    if (n == "min") return std::make_unique<FBin<OpFMin>>(arg(0), arg(1));
    if (n == "max") return std::make_unique<FBin<OpFMax>>(arg(0), arg(1));
  }
  if (k == 3 && n == "fma") return std::make_unique<FFma>(arg(0), arg(1), arg(2));
  if (k == 3 && n == "clamp") return std::make_unique<FClamp>(arg(0), arg(1), arg(2));
  fail(e.loc, "'" + n + "' with " + std::to_string(k) + " arguments has no float form");
}

IP Compiler::call_i(const Expr& e) {
  const std::string& n = e.name;
  size_t k = e.args.size();
  WrapInfo w = WrapInfo::of(ty(e));
  auto arg = [&](size_t i) { return as_i(*e.args[i]); };
  if (n == "select" && k == 3) {
    auto s = std::make_unique<ISelect>();
    s->c = arg(0);
    s->a = arg(1);
    s->b = arg(2);
    return s;
  }
  if (k == 2 && n == "min") return make_ibin<OpMin>(arg(0), arg(1), WrapInfo{});
  if (k == 2 && n == "max") return make_ibin<OpMax>(arg(0), arg(1), WrapInfo{});
  if (k == 1 && n == "abs") {
    auto a = std::make_unique<IAbs>();
    a->a = arg(0);
    a->w = w;
    return a;
  }
  if (k == 1 && (n == "floor" || n == "ceil" || n == "round" || n == "round_even" || n == "trunc"))
    return arg(0);  // integers are already integral
  if (k == 3 && n == "clamp") {
    auto c = std::make_unique<IClamp>();
    c->x = arg(0);
    c->lo = arg(1);
    c->hi = arg(2);
    return c;
  }
  if (k == 3 && n == "fma") {
    auto f = std::make_unique<IFma>();
    f->a = arg(0);
    f->b = arg(1);
    f->c = arg(2);
    f->w = w;
    return f;
  }
  if ((k == 2 && (n == "rdmulh" || n == "rshift")) || (k == 3 && n == "requant")) {
    auto q = std::make_unique<IQuant>();
    q->kind = n == "rdmulh" ? IQuant::Rdmulh : n == "rshift" ? IQuant::Rshift : IQuant::Requant;
    q->a = arg(0);
    q->b = arg(1);
    if (k == 3) q->c = arg(2);
    q->err = err_;
    q->loc = e.loc;
    return q;
  }
  fail(e.loc, "'" + n + "' with " + std::to_string(k) + " arguments has no integer form");
}

template <class Node, class Data, class Pad>
static std::unique_ptr<Node> fill_load(Node* raw, Addr a, Data data, Pad pad, const ErrCtx* err,
                                       SourceLoc loc) {
  std::unique_ptr<Node> n(raw);
  n->data = data;
  n->pad = std::move(pad);
  n->err = err;
  n->loc = loc;
  if constexpr (requires { n->d[0]; }) {
    for (size_t r = 0; r < a.dims.size(); ++r) n->d[r] = a.dims[r];
  }
  n->addr = std::move(a);
  return n;
}

// An unrolled load when every index is affine in at most two variables and the rank is <= 4.
template <class Node, int B>
static std::unique_ptr<Node> make_load(Addr a, const NodeValue<Node>* data, std::unique_ptr<Node> pad,
                                       const ErrCtx* err, SourceLoc loc) {
  if (a.all_affine) {
    switch (a.dims.size()) {
      case 1: return fill_load(new LoadAffine<Node, 1, B>, std::move(a), data, std::move(pad), err, loc);
      case 2: return fill_load(new LoadAffine<Node, 2, B>, std::move(a), data, std::move(pad), err, loc);
      case 3: return fill_load(new LoadAffine<Node, 3, B>, std::move(a), data, std::move(pad), err, loc);
      case 4: return fill_load(new LoadAffine<Node, 4, B>, std::move(a), data, std::move(pad), err, loc);
      default: break;
    }
  }
  return fill_load(new Load<Node, B>, std::move(a), data, std::move(pad), err, loc);
}

FP Compiler::load_f(const Expr& e) {
  const Buf& b = buf(e.name, e.loc);
  if (!is_float(b.type)) return std::make_unique<FFromI>(load_i(e));
  Addr a = make_addr(b, e.args, e.loc);
  switch (e.boundary) {
    case Boundary::None: return make_load<FNode, 0>(std::move(a), b.f, nullptr, err_, e.loc);
    case Boundary::Pad: return make_load<FNode, 1>(std::move(a), b.f, as_f(*e.pad_value), err_, e.loc);
    case Boundary::Edge: return make_load<FNode, 2>(std::move(a), b.f, nullptr, err_, e.loc);
    case Boundary::Mirror: return make_load<FNode, 3>(std::move(a), b.f, nullptr, err_, e.loc);
  }
  return nullptr;
}

IP Compiler::load_i(const Expr& e) {
  const Buf& b = buf(e.name, e.loc);
  if (is_float(b.type)) fail(e.loc, "internal: float tensor '" + b.name + "' read as an integer");
  Addr a = make_addr(b, e.args, e.loc);
  switch (e.boundary) {
    case Boundary::None: return make_load<INode, 0>(std::move(a), b.i, nullptr, err_, e.loc);
    case Boundary::Pad: return make_load<INode, 1>(std::move(a), b.i, as_i(*e.pad_value), err_, e.loc);
    case Boundary::Edge: return make_load<INode, 2>(std::move(a), b.i, nullptr, err_, e.loc);
    case Boundary::Mirror: return make_load<INode, 3>(std::move(a), b.i, nullptr, err_, e.loc);
  }
  return nullptr;
}

std::vector<RangeC> Compiler::ranges(const std::vector<Range>& rs) {
  std::vector<RangeC> out;
  for (const Range& r : rs) {
    RangeC c;
    c.lo = as_i(*r.lo);
    c.hi = as_i(*r.hi);
    auto* klo = dynamic_cast<IConst*>(c.lo.get());
    auto* khi = dynamic_cast<IConst*>(c.hi.get());
    if (klo && khi) {
      c.is_const = true;
      c.klo = klo->v;
      c.khi = khi->v;
    }
    c.var = new_slot();
    scope.emplace_back(r.var, c.var);
    out.push_back(std::move(c));
  }
  return out;
}

FP Compiler::reduce_f(const Expr& e) {
  size_t mark = scope.size();
  if (e.reduce_op == ReduceOp::Sum) {
    if (FP d = try_prodsum(e)) return d;
  }
  std::vector<RangeC> rs = ranges(e.ranges);
  FP body = as_f(*e.args[0]);
  scope.resize(mark);
  auto build = [&](auto node) -> FP {
    node->ranges = std::move(rs);
    node->body = std::move(body);
    return node;
  };
  switch (e.reduce_op) {
    case ReduceOp::Sum: return build(std::make_unique<FReduce<Red::Sum>>());
    case ReduceOp::Prod: return build(std::make_unique<FReduce<Red::Prod>>());
    case ReduceOp::Max: return build(std::make_unique<FReduce<Red::Max>>());
    case ReduceOp::Min: return build(std::make_unique<FReduce<Red::Min>>());
    default: break;
  }
  fail(e.loc, "internal: argmax/argmin have an integer result");
}

IP Compiler::reduce_i(const Expr& e) {
  size_t mark = scope.size();
  std::vector<RangeC> rs = ranges(e.ranges);
  const Expr& body = *e.args[0];
  ScalarType bt = ty(body);
  if (e.reduce_op == ReduceOp::Argmax || e.reduce_op == ReduceOp::Argmin) {
    if (rs.size() != 1) fail(e.loc, "argmax/argmin take exactly one range");
    bool is_max = e.reduce_op == ReduceOp::Argmax;
    IP out;
    auto fill = [&](auto node, auto b) {
      node->range = std::move(rs[0]);
      node->body = std::move(b);
      node->err = err_;
      node->loc = e.loc;
      out = std::move(node);
    };
    if (is_float(bt)) {
      if (is_max) fill(std::make_unique<IArg<true, FNode>>(), cf(body));
      else fill(std::make_unique<IArg<false, FNode>>(), cf(body));
    } else {
      if (is_max) fill(std::make_unique<IArg<true, INode>>(), ci(body));
      else fill(std::make_unique<IArg<false, INode>>(), ci(body));
    }
    scope.resize(mark);
    return out;
  }
  IP b = as_i(body);
  scope.resize(mark);
  auto build = [&](auto node) -> IP {
    node->ranges = std::move(rs);
    node->body = std::move(b);
    node->w = WrapInfo::of(bt);
    node->init = e.reduce_op == ReduceOp::Max ? int_min(bt) : int_max(bt);
    return node;
  };
  switch (e.reduce_op) {
    case ReduceOp::Sum: return build(std::make_unique<IReduce<Red::Sum>>());
    case ReduceOp::Prod: return build(std::make_unique<IReduce<Red::Prod>>());
    case ReduceOp::Max: return build(std::make_unique<IReduce<Red::Max>>());
    default: return build(std::make_unique<IReduce<Red::Min>>());
  }
}

}  // namespace ekb::ir::interp
