#include "lower/plan_storage.h"

#include "lower/mutator.h"

namespace ekb::lir {

namespace {

class StoragePlanner : public Mutator {
 public:
  StoragePlanner(Func& f, const StoragePlanOptions& o) : f_(f), options_(o) {}

  using Mutator::mutate;
  StmtP mutate(const StmtP& s) override {
    if (s->kind != StmtKind::Allocate || s->scope != MemoryScope::Global) return mutate_children(s);
    // Placed before the body, so that offsets follow declaration order.
    auto n = std::make_shared<Stmt>(*s);
    int64_t bytes = s->extent->int_value * ir::byte_size(s->type);
    if (bytes <= options_.max_stack_bytes) {
      n->scope = MemoryScope::Stack;
    } else {
      n->scope = MemoryScope::Scratch;
      n->scratch_offset = f_.scratch_bytes;
      f_.scratch_bytes += (bytes + 63) / 64 * 64;
    }
    n->body = mutate(s->body);
    return n;
  }

 private:
  Func& f_;
  const StoragePlanOptions& options_;
};

}  // namespace

void plan_storage(Func& f, const StoragePlanOptions& options) {
  StoragePlanner p(f, options);
  f.body = p.mutate(f.body);
}

}  // namespace ekb::lir
