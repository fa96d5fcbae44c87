#include "lower/insert_prefetches.h"

#include <set>

#include "lir/mutator.h"
#include "lir/simplify.h"

namespace ekb::lower {

using namespace lir;

namespace {

// x with every variable set to 0: the variables bound outside the body cancel in the span of an
// affine index.
ExprP outside_at_zero(ExprP x) {
  std::set<std::string> vars;
  for_each_expr(*x, [&](const Expr& v) {
    if (v.kind == ExprKind::Var) vars.insert(v.name);
  });
  for (const std::string& v : vars) x = substitute(x, v, index_imm(0));
  return x;
}

// The Prefetch statements that start each iteration of `loop`.
std::vector<StmtP> prefetches_of(const Func& f, const Stmt& loop) {
  std::vector<const Stmt*> inner;
  for_each_stmt(*loop.body, [&](const Stmt& s) {
    if (s.kind == StmtKind::For) inner.push_back(&s);
  });
  std::vector<StmtP> out;
  for (const Stmt::Prefetch& p : loop.prefetches) {
    const Buffer* b = f.buffer(p.tensor);
    if (!b) continue;
    const int64_t element = ir::byte_size(b->type);
    std::vector<std::pair<ExprP, int64_t>> done;  // (index, byte offset) already prefetched
    for_each_expr(*loop.body, [&](const Expr& e) {
      if (e.kind != ExprKind::Load || e.name != p.tensor || e.args.size() != 1) return;
      ExprP first = e.args[0], last = e.args[0];
      for (const Stmt* s : inner) {
        first = substitute(first, s->name, s->min);
        last = substitute(last, s->name,
                          binary(BinOp::Sub, binary(BinOp::Add, s->min, s->extent), index_imm(1)));
      }
      first = simplify(first);
      const ExprP span = simplify(binary(BinOp::Sub, outside_at_zero(last), outside_at_zero(first)));
      int64_t bytes = element;
      if (p.lines > 0)
        bytes = p.lines * kCacheLineBytes;
      else if (span->kind == ExprKind::IntImm && span->int_value > 0 &&
               (span->int_value + 1) * element <= kMaxPrefetchLines * kCacheLineBytes)
        bytes = (span->int_value + 1) * element;
      for (int64_t offset = 0; offset < bytes; offset += kCacheLineBytes) {
        bool repeated = false;
        for (const auto& [index, at] : done) repeated |= at == offset && equal(index, first);
        if (repeated) continue;
        done.push_back({first, offset});
        out.push_back(make_prefetch(p.tensor, first, p.distance * element + offset));
      }
    });
  }
  return out;
}

class PrefetchInserter : public Mutator {
 public:
  explicit PrefetchInserter(const Func& f) : f_(f) {}

  using Mutator::mutate;
  StmtP mutate(const StmtP& s) override {
    if (s->kind != StmtKind::For || s->prefetches.empty()) return mutate_children(s);
    std::vector<StmtP> stmts = prefetches_of(f_, *s);  // of the body as the directive saw it
    auto n = std::make_shared<Stmt>(*mutate_children(s));
    n->prefetches.clear();
    stmts.push_back(n->body);
    n->body = make_block(std::move(stmts));
    return n;
  }

 private:
  const Func& f_;
};

}  // namespace

void insert_prefetches(Func& f) {
  if (f.body) f.body = PrefetchInserter(f).mutate(f.body);
}

}  // namespace ekb::lower
