#include "lower/widen_half_precision.h"

#include <set>

#include "lir/mutator.h"
#include "lower/region.h"

namespace ekb::lower {

using namespace lir;

namespace {

ScalarType widened(ScalarType t) { return ir::is_half(t) ? ScalarType::F32 : t; }

class HalfWidener : public Mutator {
 public:
  explicit HalfWidener(const Func& f) : f_(f) {}

  using Mutator::mutate;
  ExprP mutate(const ExprP& e) override {
    ExprP m = mutate_children(e);
    switch (m->kind) {
      case ExprKind::Load:
        if (!ir::is_half(m->type)) return m;
        if (f_.buffer(m->name)->type == ScalarType::F32) {  // a temp now kept in f32
          auto n = std::make_shared<Expr>(*m);
          n->type = ScalarType::F32;
          return n;
        }
        return cast(ScalarType::F32, m);
      case ExprKind::Cast: {
        const ExprP& v = m->args[0];
        ScalarType to = widened(m->type);
        if (v->type == to) return v;
        if (to == m->type) return m;
        return cast(to, v, m->saturate);
      }
      default:
        if (!ir::is_half(m->type)) return m;
        auto n = std::make_shared<Expr>(*m);
        n->type = ScalarType::F32;
        return n;
    }
  }

  StmtP mutate(const StmtP& s) override {
    StmtP m = mutate_children(s);
    switch (m->kind) {
      case StmtKind::Store: {
        const Buffer* b = f_.buffer(m->name);
        if (!b || !ir::is_half(b->type)) return m;
        auto n = std::make_shared<Stmt>(*m);
        n->value = cast(b->type, m->value);
        return n;
      }
      case StmtKind::Allocate:
        if (!ir::is_half(m->type) || f_.buffer(m->name)->type != ScalarType::F32) return m;
        {
          auto n = std::make_shared<Stmt>(*m);
          n->type = ScalarType::F32;
          return n;
        }
      case StmtKind::LetStmt:
      case StmtKind::DeclareVar:
      case StmtKind::Assign:
        if (!ir::is_half(m->type)) return m;
        {
          auto n = std::make_shared<Stmt>(*m);
          n->type = ScalarType::F32;
          return n;
        }
      default:
        return m;
    }
  }

 private:
  const Func& f_;
};

// Half outputs the kernel reads are computed in an f32 shadow and rounded into the output at the end.
void shadow_read_half_outputs(Func& f) {
  std::set<std::string> read;
  for_each_expr(*f.body, [&](const Expr& e) {
    if (e.kind != ExprKind::Load) return;
    const Buffer* b = f.buffer(e.name);
    if (b && b->role == BufferRole::Output && ir::is_half(b->type)) read.insert(e.name);
  });
  for (const std::string& name : read) {
    Buffer out = *f.buffer(name);
    std::string shadow = f.fresh_name(name + "_f32");
    f.buffers.push_back({shadow, ScalarType::F32, out.shape, BufferRole::Temp});
    // Its loads keep their half type until HalfWidener reads the f32 buffer as f32.
    StmtP body = redirect_accesses(f.body, name, shadow, [](const std::vector<ExprP>& indices) { return indices; });
    std::string e = f.fresh_name("e");
    ExprP idx = var(e, ScalarType::Index);  // one flat index: flatten_storage leaves it as it is
    StmtP copy = make_for(e, index_imm(0), index_imm(out.num_elements()),
                          make_store(name, {idx}, load(shadow, ScalarType::F32, {idx})));
    f.body = make_allocate(shadow, ScalarType::F32, out.num_elements(), MemoryScope::Global,
                           make_block({body, copy}));
  }
}

}  // namespace

void widen_half_precision(Func& f, bool keep_half_temps) {
  if (!keep_half_temps) {
    for (Buffer& b : f.buffers)
      if (b.role == BufferRole::Temp && ir::is_half(b.type)) b.type = ScalarType::F32;
    shadow_read_half_outputs(f);
  }
  HalfWidener w(f);
  f.body = w.mutate(f.body);
}

}  // namespace ekb::lower
