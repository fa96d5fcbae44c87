#include "lower/vectorize_cooperative_copies.h"

#include <algorithm>
#include <map>
#include <numeric>
#include <optional>

#include "lir/mutator.h"
#include "lir/simplify.h"

namespace ekb::lower {

using namespace lir;

namespace {

class CopyVectorizer : public Mutator {
 public:
  explicit CopyVectorizer(const Func& f) : f_(f) {}

  using Mutator::mutate;
  StmtP mutate(const StmtP& s) override {
    if (s->kind == StmtKind::LetStmt) let_values_[s->name] = s->value;
    if (s->kind != StmtKind::For || s->for_kind != ForKind::GpuCooperative) return mutate_children(s);
    auto n = std::make_shared<Stmt>(*s);
    n->cooperative.name = "ekb_coop" + std::to_string(copies_++);
    vectorize(*n);
    return n;
  }

 private:
  // The largest power of two (up to 16) that `e` is provably a multiple of, through the lets met.
  int64_t known_multiple(const Expr& e) const {
    constexpr int64_t kMax = 16;  // float4 needs 4; more is never asked
    switch (e.kind) {
      case ExprKind::IntImm:
        return e.int_value == 0 ? kMax : std::gcd(kMax, e.int_value < 0 ? -e.int_value : e.int_value);
      case ExprKind::Var: {
        auto it = let_values_.find(e.name);
        return it != let_values_.end() ? known_multiple(*it->second) : 1;
      }
      case ExprKind::Cast:
        return ir::is_float(e.type) ? 1 : known_multiple(*e.args[0]);
      case ExprKind::Binary:
        switch (e.bin_op) {
          case BinOp::Add:
          case BinOp::Sub:
          case BinOp::Min:
          case BinOp::Max:
            return std::gcd(known_multiple(*e.args[0]), known_multiple(*e.args[1]));
          case BinOp::Mul:
            return std::min(kMax, known_multiple(*e.args[0]) * known_multiple(*e.args[1]));
          default:
            return 1;
        }
      default:
        return 1;
    }
  }

  void vectorize(Stmt& nest) {
    const Stmt* inner = &nest;
    while (inner->body->kind == StmtKind::For && inner->body->for_kind == ForKind::GpuCooperative)
      inner = inner->body.get();
    const Stmt& copy = *inner->body;
    if (copy.kind != StmtKind::Store || copy.value->kind != ExprKind::Load || copy.indices.size() != 1) return;
    const Expr& load = *copy.value;
    const Buffer* src = f_.buffer(load.name);
    const Buffer* dst = f_.buffer(copy.name);
    if (!src || !dst || src->type != ScalarType::F32 || dst->type != ScalarType::F32 || load.args.size() != 1) return;
    if (inner->extent->kind != ExprKind::IntImm || inner->extent->int_value % 4 != 0) return;
    // Consecutive elements, the first of every group of 4 aligned to 16 bytes.
    auto aligned_run = [&](const ExprP& index) {
      return coefficient_of(*index, inner->name) == std::optional<int64_t>(1) &&
             known_multiple(*substitute(index, inner->name, inner->min)) % 4 == 0;
    };
    if (!aligned_run(load.args[0])) return;
    nest.cooperative.lanes = 4;
    nest.cooperative.vector_store = aligned_run(copy.indices[0]);
    if (nest.cooperative.vector_store) return;
    for (int64_t lane = 0; lane < 4; ++lane)
      nest.cooperative.lane_indices.push_back(simplify(substitute(
          copy.indices[0], inner->name, binary(BinOp::Add, var(inner->name, ScalarType::Index), index_imm(lane)))));
  }

  const Func& f_;
  std::map<std::string, ExprP> let_values_;
  int copies_ = 0;
};

}  // namespace

void vectorize_cooperative_copies(Func& f) {
  if (f.body) f.body = CopyVectorizer(f).mutate(f.body);
}

}  // namespace ekb::lower
