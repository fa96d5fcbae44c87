#include "lower/plan_storage.h"

#include <algorithm>

#include "lir/mutator.h"

namespace ekb::lower {

using namespace lir;

namespace {

class StoragePlanner : public Mutator {
 public:
  StoragePlanner(Func& f, const StoragePlanOptions& o) : f_(f), options_(o) {}

  using Mutator::mutate;
  StmtP mutate(const StmtP& s) override {
    // Each thread of a parallel loop, and each GPU thread inside a bound loop, has its own copy.
    if (s->kind == StmtKind::For && (s->for_kind == ForKind::Parallel || s->for_kind == ForKind::GpuBlock ||
                                     s->for_kind == ForKind::GpuThread)) {
      ++parallel_depth_;
      StmtP m = mutate_children(s);
      --parallel_depth_;
      return m;
    }
    if (s->kind != StmtKind::Allocate || s->scope != MemoryScope::Global) return mutate_children(s);
    // Placed before the body, so that offsets follow declaration order.
    auto n = std::make_shared<Stmt>(*s);
    int64_t bytes = s->extent->int_value * ir::byte_size(s->type);
    // Inside a parallel loop each thread needs its own copy: a local array of the thread.
    if (bytes <= options_.max_stack_bytes || parallel_depth_ > 0) {
      n->scope = MemoryScope::Stack;
    } else {
      // Alignment beyond the workspace's 64 bytes is made at run time: reserve room for it.
      int64_t align = std::max<int64_t>(64, s->alignment);
      n->scope = MemoryScope::Scratch;
      n->scratch_offset = f_.scratch_bytes;
      f_.scratch_bytes += (bytes + align - 64 + 63) / 64 * 64;
    }
    n->body = mutate(s->body);
    return n;
  }

 private:
  Func& f_;
  const StoragePlanOptions& options_;
  int parallel_depth_ = 0;
};

}  // namespace

void plan_storage(Func& f, const StoragePlanOptions& options) {
  StoragePlanner p(f, options);
  f.body = p.mutate(f.body);
}

}  // namespace ekb::lower
