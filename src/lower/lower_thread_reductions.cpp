#include "lower/lower_thread_reductions.h"

#include <algorithm>

#include "lir/mutator.h"
#include "lower/schedule_bind.h"

namespace ekb::lower {

using namespace lir;

namespace {

class ThreadReductionLowerer : public Mutator {
 public:
  ThreadReductionLowerer(Func& f, const GpuLowerOptions& options) : f_(f), options_(options) {}

  using Mutator::mutate;
  StmtP mutate(const StmtP& s) override {
    if (s->kind == StmtKind::Kernel) return kernel(s);
    if (s->kind == StmtKind::For && s->for_kind == ForKind::GpuThread && geometry_) return thread_loop(s);
    return mutate_children(s);
  }

 private:
  StmtP kernel(const StmtP& k) {
    if (k->launch.kind != LaunchKind::Grid) return k;
    geometry_ = &k->launch.geometry;
    slots_.clear();
    StmtP body = mutate(k->body);
    geometry_ = nullptr;
    // The slots live for the whole kernel, declared before everything else.
    for (size_t i = slots_.size(); i-- > 0;) {
      auto a = std::make_shared<Stmt>(*slots_[i]);
      a->body = body;
      body = a;
    }
    auto n = std::make_shared<Stmt>(*k);
    n->body = body;
    return n;
  }

  StmtP thread_loop(const StmtP& loop) {
    const std::string id = std::to_string(thread_loops_++);
    StmtP lowered = mutate_children(loop);
    const std::vector<ThreadAccumulator> accumulators = thread_accumulators(*loop);
    if (accumulators.empty()) return lowered;
    const int axis = loop->gpu_axis;
    const int64_t width = geometry_->block[axis];  // threads along the axis (those past the loop hold the identity)

    std::vector<std::string> before;
    for (const ThreadAccumulator& a : accumulators) before.push_back(f_.fresh_name("ekb_before" + id + "_" + a.var));
    std::vector<StmtP> tail = {lowered};
    if (width > 1) tail.push_back(all_reduce(accumulators, axis, id));
    for (size_t i = 0; i < accumulators.size(); ++i) {
      const ThreadAccumulator& a = accumulators[i];
      tail.push_back(make_assign(a.var, binary(a.op, var(a.var, a.type), var(before[i], a.type))));
    }
    StmtP s = make_block(tail);
    for (size_t i = accumulators.size(); i-- > 0;) {
      const ThreadAccumulator& a = accumulators[i];
      s = make_let(before[i], var(a.var, a.type), make_block({make_assign(a.var, combine_identity(a.op, a.type)), s}));
    }
    return s;
  }

  StmtP all_reduce(const std::vector<ThreadAccumulator>& accumulators, int axis, const std::string& id) {
    const int64_t width = geometry_->block[axis], threads = geometry_->threads();
    const bool shuffles = axis == 0 && width % 32 == 0 &&
                          std::all_of(accumulators.begin(), accumulators.end(), [&](const ThreadAccumulator& a) {
                            return options_.warp_shuffle_types.count(a.type) > 0;
                          });
    const AllReduceForm form = !shuffles                            ? AllReduceForm::Tree
                               : options_.warp_shuffles_conditional ? AllReduceForm::ShufflesOrTree
                                                                    : AllReduceForm::Shuffles;
    // One set of slots serves whichever form the compiler keeps: a slot per thread for the tree,
    // one per warp for the shuffles (none with a single warp).
    const int64_t slots = form != AllReduceForm::Shuffles ? threads : width / 32 > 1 ? threads / 32 : 0;
    std::vector<Stmt::Combine> combines;
    for (const ThreadAccumulator& a : accumulators) {
      Stmt::Combine c{a.var, a.type, a.op, ""};
      if (slots > 0) {
        c.slots = f_.fresh_name("ekb_red" + id + "_" + a.var);
        slots_.push_back(make_allocate(c.slots, a.type == ScalarType::Index ? ScalarType::I64 : a.type, slots,
                                       MemoryScope::Shared, make_block({})));
      }
      combines.push_back(c);
    }
    return make_thread_all_reduce(std::move(combines), axis, form);
  }

  Func& f_;
  const GpuLowerOptions& options_;
  const KernelGeometry* geometry_ = nullptr;  // of the Grid kernel being lowered
  std::vector<StmtP> slots_;                  // its shared slots, in program order
  int thread_loops_ = 0;
};

}  // namespace

void lower_thread_reductions(Func& f, const GpuLowerOptions& options) {
  if (!f.body) return;
  f.body = ThreadReductionLowerer(f, options).mutate(f.body);
}

}  // namespace ekb::lower
