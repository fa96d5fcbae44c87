#include "lower/flatten_storage.h"

#include <stdexcept>

#include "lir/mutator.h"

namespace ekb::lower {

using namespace lir;

ExprP flat_index(const std::vector<ExprP>& indices, const std::vector<int64_t>& shape) {
  if (indices.size() != shape.size()) throw std::logic_error("flat_index: rank mismatch");
  ExprP flat;
  int64_t stride = 1;
  for (size_t d = indices.size(); d-- > 0;) {
    ExprP term = stride == 1 ? indices[d] : binary(BinOp::Mul, indices[d], index_imm(stride));
    flat = flat ? binary(BinOp::Add, term, flat) : term;
    stride *= shape[d];
  }
  return flat ? flat : index_imm(0);
}

namespace {

class Flattener : public Mutator {
 public:
  explicit Flattener(const Func& f) : f_(f) {}

  using Mutator::mutate;
  ExprP mutate(const ExprP& e) override {
    ExprP m = mutate_children(e);
    if (m->kind != ExprKind::Load || m->args.size() == 1) return m;
    return with_args(*m, {flat_index(m->args, shape(m->name))});
  }

  StmtP mutate(const StmtP& s) override {
    StmtP m = mutate_children(s);
    if (m->kind != StmtKind::Store || m->indices.size() == 1) return m;
    auto n = std::make_shared<Stmt>(*m);
    n->indices = {flat_index(m->indices, shape(m->name))};
    return n;
  }

 private:
  const std::vector<int64_t>& shape(const std::string& buffer) const {
    const Buffer* b = f_.buffer(buffer);
    if (!b) throw std::logic_error("flatten_storage: unknown buffer '" + buffer + "'");
    return b->shape;
  }
  const Func& f_;
};

}  // namespace

void flatten_storage(Func& f) {
  Flattener fl(f);
  f.body = fl.mutate(f.body);
}

}  // namespace ekb::lower
