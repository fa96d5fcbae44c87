#include "lower/lower_boundaries.h"

#include <stdexcept>

#include "lir/mutator.h"

namespace ekb::lower {

using namespace lir;

namespace {

class BoundaryLowerer : public Mutator {
 public:
  explicit BoundaryLowerer(const Func& f) : f_(f) {}

  using Mutator::mutate;
  ExprP mutate(const ExprP& e) override {
    ExprP m = mutate_children(e);
    if (m->kind != ExprKind::Load || m->boundary == ir::Boundary::None) return m;
    const Buffer* b = f_.buffer(m->name);
    if (!b || b->shape.size() != m->args.size())
      throw std::logic_error("lower_boundaries: '" + m->name + "' read with the wrong rank");
    return lower_boundary(*m, *b);
  }

 private:
  const Func& f_;
};

}  // namespace

ExprP lower_boundary(const Expr& m, const Buffer& b) {
  auto plain = std::make_shared<Expr>(m);
  plain->boundary = ir::Boundary::None;
  plain->pad = nullptr;
  switch (m.boundary) {
    case ir::Boundary::Pad: {
      ExprP inside;
      for (size_t d = 0; d < m.args.size(); ++d) {
        ExprP i = m.args[d];
        ExprP c = binary(BinOp::And, binary(BinOp::Le, index_imm(0), i),
                         binary(BinOp::Lt, i, index_imm(b.shape[d])));
        inside = inside ? binary(BinOp::And, inside, c) : c;
      }
      return select(inside, plain, m.pad);
    }
    case ir::Boundary::Edge:
      for (size_t d = 0; d < m.args.size(); ++d)
        plain->args[d] =
            binary(BinOp::Min, binary(BinOp::Max, m.args[d], index_imm(0)), index_imm(b.shape[d] - 1));
      return plain;
    case ir::Boundary::Mirror:
      for (size_t d = 0; d < m.args.size(); ++d)
        plain->args[d] =
            call(Intrinsic::MirrorIndex, ScalarType::Index, {m.args[d], index_imm(b.shape[d])});
      return plain;
    case ir::Boundary::None:
      break;
  }
  return plain;
}

void lower_boundaries(Func& f) {
  BoundaryLowerer l(f);
  f.body = l.mutate(f.body);
}

}  // namespace ekb::lower
