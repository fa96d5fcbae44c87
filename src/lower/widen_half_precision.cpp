#include "lower/widen_half_precision.h"

#include "lower/mutator.h"

namespace ekb::lir {

bool is_half(ScalarType t) { return t == ScalarType::F16 || t == ScalarType::BF16; }

namespace {

ScalarType widened(ScalarType t) { return is_half(t) ? ScalarType::F32 : t; }

class HalfWidener : public Mutator {
 public:
  explicit HalfWidener(const Func& f) : f_(f) {}

  using Mutator::mutate;
  ExprP mutate(const ExprP& e) override {
    ExprP m = mutate_children(e);
    switch (m->kind) {
      case ExprKind::Load:
        if (is_half(m->type)) return cast(ScalarType::F32, m);
        return m;
      case ExprKind::Cast: {
        const ExprP& v = m->args[0];
        ScalarType to = widened(m->type);
        if (v->type == to) return v;
        if (to == m->type) return m;
        return cast(to, v, m->saturate);
      }
      default:
        if (!is_half(m->type)) return m;
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
        if (!b || !is_half(b->type)) return m;
        auto n = std::make_shared<Stmt>(*m);
        n->value = cast(b->type, m->value);
        return n;
      }
      case StmtKind::LetStmt:
      case StmtKind::DeclareVar:
      case StmtKind::Assign:
        if (!is_half(m->type)) return m;
        {
          auto n = std::make_shared<Stmt>(*m);
          n->type = ScalarType::F32;
          return n;
        }
      default: return m;
    }
  }

 private:
  const Func& f_;
};

}  // namespace

void widen_half_precision(Func& f) {
  HalfWidener w(f);
  f.body = w.mutate(f.body);
}

}  // namespace ekb::lir
