// The reference interpreter: statements, program setup and the public API (interpreter.h).
// Reference values must not depend on the compiler's FMA contraction (clang contracts a * b + c
// by default on FMA targets); GCC in ISO mode (-std=c++20) does not contract.
#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#endif
#include "ir/interpreter.h"

#include <deque>
#include <set>
#include <stdexcept>

#include "ir/interp_compile.h"
#include "ir/interp_ops.h"

namespace ekb::ir {
namespace interp {

namespace {

std::vector<int64_t> row_major_strides(const std::vector<int64_t>& shape) {
  std::vector<int64_t> s(shape.size(), 1);
  for (size_t d = shape.size(); d-- > 1;) s[d - 1] = s[d] * shape[d];
  return s;
}

Buf make_buf(const std::string& name, TensorData& t) {
  Buf b;
  b.name = name;
  b.type = t.type;
  b.wrap = WrapInfo::of(t.type);
  b.shape = t.shape;
  b.strides = row_major_strides(t.shape);
  if (is_float(t.type)) b.f = t.f.data();
  else b.i = t.i.data();
  return b;
}

// A pure definition: the left-hand side's variables run over the full extent, row-major.
struct SPure final : SNode {
  std::vector<int64_t*> vars;
  const Buf* buf = nullptr;
  FP f;
  IP i;
  void loop(size_t d, int64_t off) const {
    int64_t* v = vars[d];
    int64_t n = buf->shape[d];
    if (d + 1 == vars.size()) {
      if (f) {
        double* out = buf->f + off;
        const FNode* e = f.get();
        for (int64_t k = 0; k < n; ++k) {
          *v = k;
          out[k] = e->eval();
        }
      } else {
        int64_t* out = buf->i + off;
        const INode* e = i.get();
        for (int64_t k = 0; k < n; ++k) {
          *v = k;
          out[k] = wrap_dyn(static_cast<uint64_t>(e->eval()), buf->wrap);
        }
      }
      return;
    }
    int64_t s = buf->strides[d];
    for (int64_t k = 0; k < n; ++k) {
      *v = k;
      loop(d + 1, off + k * s);
    }
  }
  void run() const override { loop(0, 0); }
};

// An update assignment: free left-hand-side variables run innermost over the full extent.
struct SAssign final : SNode {
  Addr lhs;
  std::vector<int64_t*> free_vars;
  std::vector<int64_t> free_ext;
  FP f;
  IP i;
  const ErrCtx* err = nullptr;
  SourceLoc loc;
  void store() const {
    int64_t off;
    if (f) {
      double v = f->eval();
      if (!lhs.offset(off)) raise(err, loc, "write out of bounds: " + lhs.describe());
      lhs.buf->f[off] = v;
    } else {
      int64_t v = i->eval();
      if (!lhs.offset(off)) raise(err, loc, "write out of bounds: " + lhs.describe());
      lhs.buf->i[off] = wrap_dyn(static_cast<uint64_t>(v), lhs.buf->wrap);
    }
  }
  void loop(size_t d) const {
    if (d == free_vars.size()) {
      store();
      return;
    }
    for (int64_t k = 0; k < free_ext[d]; ++k) {
      *free_vars[d] = k;
      loop(d + 1);
    }
  }
  void run() const override { loop(0); }
};

struct SFor final : SNode {
  std::vector<RangeC> ranges;
  std::vector<SP> body;
  void run() const override {
    for_ranges(ranges, 0, [&] {
      for (const SP& s : body) s->run();
    });
  }
};

}  // namespace

std::vector<SP> Compiler::statements(const std::vector<Stmt>& stmts) {
  std::vector<SP> out;
  const std::vector<bool> pure = pure_definitions(inst_, stmts);
  for (size_t i = 0; i < stmts.size(); ++i) out.push_back(stmt(stmts[i], pure[i]));
  return out;
}

SP Compiler::stmt(const Stmt& s, bool pure) {
  size_t mark = scope.size();
  if (s.kind == StmtKind::For) {
    auto n = std::make_unique<SFor>();
    n->ranges = ranges(s.ranges);
    for (const Stmt& b : s.body) n->body.push_back(stmt(b, false));
    scope.resize(mark);
    return n;
  }
  const Buf& b = buf(s.tensor, s.loc);
  bool fl = is_float(b.type);
  if (b.shape.size() != s.indices.size())
    fail(s.loc, "'" + b.name + "' has " + std::to_string(b.shape.size()) + " dimensions");
  if (pure) {
    auto n = std::make_unique<SPure>();
    n->buf = &b;
    for (const auto& ix : s.indices) {
      n->vars.push_back(new_slot());
      scope.emplace_back(ix->name, n->vars.back());
    }
    if (fl) n->f = as_f(*s.value);
    else n->i = as_i(*s.value);
    scope.resize(mark);
    return n;
  }
  auto n = std::make_unique<SAssign>();
  for (size_t d = 0; d < s.indices.size(); ++d) {
    const Expr& ix = *s.indices[d];
    if (ix.kind == ExprKind::Name && !find_var(ix.name) && !inst_.params.count(ix.name) &&
        !inst_.lets.count(ix.name)) {
      n->free_vars.push_back(new_slot());
      n->free_ext.push_back(b.shape[d]);
      scope.emplace_back(ix.name, n->free_vars.back());
    }
  }
  n->lhs = make_addr(b, s.indices, s.loc);
  if (fl) n->f = as_f(*s.value);
  else n->i = as_i(*s.value);
  n->err = err_;
  n->loc = s.loc;
  scope.resize(mark);
  return n;
}

// Everything one run needs, in an order that keeps node pointers valid.
struct Program {
  ErrCtx err;
  std::vector<TensorData> data;
  std::vector<Buf> bufs;
  std::deque<int64_t> slots;
  std::vector<SP> stmts;
};

}  // namespace interp

namespace {

std::string shape_text(const std::vector<int64_t>& s) {
  std::string out = "[";
  for (size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
  return out + "]";
}

void check_inputs(const Instance& inst, const std::vector<TensorData>& inputs) {
  size_t k = 0;
  for (const TensorInstance& t : inst.tensors) {
    if (t.decl->role != TensorRole::Input) continue;
    if (k >= inputs.size())
      throw std::runtime_error(inst.full_name() + ": missing input '" + t.decl->name + "'");
    const TensorData& d = inputs[k++];
    if (d.type != t.type || d.shape != t.shape)
      throw std::runtime_error(inst.full_name() + ": input '" + t.decl->name + "' must be " +
                               std::string(scalar_type_name(t.type)) + shape_text(t.shape) +
                               ", got " + std::string(scalar_type_name(d.type)) +
                               shape_text(d.shape));
    size_t n = static_cast<size_t>(t.num_elements());
    if ((is_float(t.type) ? d.f.size() : d.i.size()) != n)
      throw std::runtime_error(inst.full_name() + ": input '" + t.decl->name +
                               "' holds the wrong number of values");
  }
  if (k != inputs.size())
    throw std::runtime_error(inst.full_name() + ": " + std::to_string(inputs.size()) +
                             " inputs given, the pattern has " + std::to_string(k));
}

}  // namespace

std::vector<TensorData> run_reference_all(const Instance& inst,
                                          const std::vector<TensorData>& inputs) {
  check_inputs(inst, inputs);
  interp::Program p;
  p.err.file = inst.module ? inst.module->file : "";
  p.err.where = inst.full_name();
  size_t k = 0;
  p.data.reserve(inst.tensors.size());
  for (const TensorInstance& t : inst.tensors) {
    if (t.decl->role == TensorRole::Input) p.data.push_back(inputs[k++]);
    else p.data.emplace_back(t.type, t.shape);
  }
  for (size_t i = 0; i < inst.tensors.size(); ++i)
    p.bufs.push_back(interp::make_buf(inst.tensors[i].decl->name, p.data[i]));
  interp::Compiler c(inst, p.bufs, p.slots, &p.err);
  p.stmts = c.statements(inst.pattern().stmts);
  for (const auto& s : p.stmts) s->run();
  return std::move(p.data);
}

std::vector<TensorData> run_reference(const Instance& inst, const std::vector<TensorData>& inputs) {
  std::vector<TensorData> all = run_reference_all(inst, inputs);
  std::vector<TensorData> out;
  for (size_t i = 0; i < inst.tensors.size(); ++i)
    if (inst.tensors[i].decl->role == TensorRole::Output) out.push_back(std::move(all[i]));
  return out;
}

// ------------------------------------------------------------------ ScalarEvaluator
struct ScalarEvaluator::Impl {
  const Instance* inst = nullptr;
  interp::ErrCtx err;
  std::vector<TensorData> data;
  std::vector<interp::Buf> bufs;
  std::deque<int64_t> slots;
  struct Entry {
    std::vector<int64_t*> vars;
    interp::FP f;
    interp::IP i;
  };
  std::vector<Entry> entries;
  std::unique_ptr<interp::Compiler> compiler;
};

ScalarEvaluator::ScalarEvaluator(const Instance& inst, const std::vector<TensorData>* inputs)
    : impl_(std::make_unique<Impl>()) {
  impl_->inst = &inst;
  impl_->err.file = inst.module ? inst.module->file : "";
  impl_->err.where = inst.full_name();
  if (inputs) {
    check_inputs(inst, *inputs);
    impl_->data = *inputs;
    size_t k = 0;
    for (const TensorInstance& t : inst.tensors)
      if (t.decl->role == TensorRole::Input)
        impl_->bufs.push_back(interp::make_buf(t.decl->name, impl_->data[k++]));
  }
  impl_->compiler =
      std::make_unique<interp::Compiler>(inst, impl_->bufs, impl_->slots, &impl_->err);
}

ScalarEvaluator::~ScalarEvaluator() = default;

int ScalarEvaluator::compile(const Expr& e, const std::vector<std::string>& vars) {
  Impl::Entry en;
  interp::Compiler& c = *impl_->compiler;
  c.scope.clear();
  for (const std::string& v : vars) {
    en.vars.push_back(c.new_slot());
    c.scope.emplace_back(v, en.vars.back());
  }
  auto t = impl_->inst->expr_types.find(&e);
  bool fl = t != impl_->inst->expr_types.end() ? is_float(t->second) : e.kind == ExprKind::FloatLit;
  try {
    if (fl) en.f = c.as_f(e);
    else en.i = c.as_i(e);
  } catch (const std::runtime_error&) {
    c.scope.clear();
    throw;
  }
  c.scope.clear();
  impl_->entries.push_back(std::move(en));
  return static_cast<int>(impl_->entries.size() - 1);
}

int64_t ScalarEvaluator::eval_int(int h, const int64_t* values) {
  Impl::Entry& en = impl_->entries.at(static_cast<size_t>(h));
  for (size_t k = 0; k < en.vars.size(); ++k) *en.vars[k] = values[k];
  if (en.f) return interp::float_to_int(en.f->eval(), int_min(ScalarType::I64), int_max(ScalarType::I64));
  return en.i->eval();
}

double ScalarEvaluator::eval_float(int h, const int64_t* values) {
  Impl::Entry& en = impl_->entries.at(static_cast<size_t>(h));
  for (size_t k = 0; k < en.vars.size(); ++k) *en.vars[k] = values[k];
  return en.f ? en.f->eval() : static_cast<double>(en.i->eval());
}

LetValue eval_constant(const Instance& inst, const Expr& e) {
  interp::ErrCtx err{inst.module ? inst.module->file : "", inst.full_name()};
  std::vector<interp::Buf> bufs;
  std::deque<int64_t> slots;
  interp::Compiler c(inst, bufs, slots, &err);
  LetValue v;
  auto it = inst.expr_types.find(&e);
  bool fl = it != inst.expr_types.end() ? is_float(it->second) : e.kind == ExprKind::FloatLit;
  if (fl) {
    v.is_float = true;
    v.float_value = c.as_f(e)->eval();
  } else {
    v.int_value = c.as_i(e)->eval();
  }
  return v;
}

}  // namespace ekb::ir
