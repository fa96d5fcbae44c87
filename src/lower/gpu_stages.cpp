#include "lower/gpu_stages.h"

#include <algorithm>

#include "lir/mutator.h"

namespace ekb::lower {

using namespace lir;

GpuStages gpu_stages(const Func& f) {
  GpuStages g;
  if (!f.body) return g;
  StmtP s = f.body;
  while (s->kind == StmtKind::Allocate || s->kind == StmtKind::LetStmt) {
    g.context.push_back(s);
    s = s->body;
  }
  const bool repeatable = std::all_of(g.context.begin(), g.context.end(), [&](const StmtP& c) {
    if (c->kind == StmtKind::Allocate) return c->scope == MemoryScope::Scratch;
    bool reads_written = false;
    for_each_expr(*c->value, [&](const Expr& x) {
      const Buffer* b = x.kind == ExprKind::Load ? f.buffer(x.name) : nullptr;
      reads_written |= b && b->role != BufferRole::Input;
    });
    return !reads_written;
  });
  if (!repeatable) {
    g.context.clear();
    g.stages = {f.body};
  } else if (s->kind == StmtKind::Block) {
    g.stages = s->stmts;
  } else {
    g.stages = {s};
  }
  return g;
}

StmtP GpuStages::build() const {
  StmtP s = make_block(stages);
  for (size_t i = context.size(); i-- > 0;) {
    auto n = std::make_shared<Stmt>(*context[i]);
    n->body = s;
    s = n;
  }
  return s;
}

}  // namespace ekb::lower
