#include "lower/schedule_loop_kinds.h"

#include "lir/mutator.h"
#include "lower/schedule_loops.h"
#include "lower/schedule_split.h"

namespace ekb::lower {

using namespace lir;

std::string concurrency_problem(const Func& f, const Stage& st, const StageLoop& loop) {
  switch (loop.role) {
    case LoopRole::Reduction:
      return "'" + loop.name + "' is a reduction loop of '" + st.name +
             "': every iteration accumulates into the same value";
    case LoopRole::Ordered:
      // Program order matters only where an iteration touches what another writes: the spatial
      // loops of a time step that reads one buffer and writes another (Jacobi) run at once, those
      // of an in-place sweep (Gauss-Seidel: A[i, j] from A[i - 1, j]) or of a scan do not.
      for (const std::string& v : loop.vars) {
        const Stmt* l = find_loop(*f.body, v);
        if (!l) continue;
        std::string why = ordered_independence_problem(f, *l);
        if (!why.empty())
          return "'" + loop.name + "' is an ordered loop of update '" + st.name +
                 "' whose iterations depend on each other: " + why;
      }
      return "";
    case LoopRole::Pure:
    case LoopRole::Free:
      break;
  }
  for (const std::string& v : loop.vars) {
    const Stmt* l = find_loop(*f.body, v);
    if (!l) continue;
    std::string why = independence_problem(*l);
    if (!why.empty()) return "the iterations of '" + loop.name + "' depend on each other: " + why;
  }
  return "";
}

namespace {

StageLoop& concurrent_loop(Func& f, Stage& st, const std::string& loop, const std::string& verb) {
  StageLoop& l = loop_named(st, loop);
  std::string why = concurrency_problem(f, st, l);
  if (!why.empty())
    throw ScheduleError("cannot " + verb + " loop '" + loop + "': " + why,
                        l.role == LoopRole::Reduction ? "rfactor the reduction to run it in parallel" : "");
  return l;
}

}  // namespace

void parallelize(Func& f, const std::string& stage, const std::string& loop) {
  Stage& st = stage_named(f, stage);
  StageLoop& l = concurrent_loop(f, st, loop, "parallelize");
  f.body = rewrite_loops(f.body, l.vars, [](const Stmt& s) {
    auto n = std::make_shared<Stmt>(s);
    n->for_kind = ForKind::Parallel;
    return StmtP(n);
  });
}

void vectorize(Func& f, const std::string& stage, const std::string& loop, int64_t width, TailStrategy tail) {
  if (width <= 0) throw ScheduleError("the vector width must be positive");
  Stage& st = stage_named(f, stage);
  StageLoop& l = concurrent_loop(f, st, loop, "vectorize");
  split_for_kind(f, st, l, width, loop + ".vector", ForKind::Vectorized, tail);
}

void unroll(Func& f, const std::string& stage, const std::string& loop, int64_t factor) {
  if (factor <= 0) throw ScheduleError("the unroll factor must be positive");
  Stage& st = stage_named(f, stage);
  split_for_kind(f, st, loop_named(st, loop), factor, loop + ".unrolled", ForKind::Unrolled);
}

}  // namespace ekb::lower
