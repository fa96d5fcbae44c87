#include "lir/verify_lir.h"

#include <map>
#include <set>
#include <vector>

namespace ekb::lir {

namespace {

class LirChecker {
 public:
  LirChecker(const Func& f, LirForm form) : form_(form), params_(f.params) {
    for (const Param& p : f.params) bind(p.name, ScalarType::Index, false);
    for (const Buffer& b : f.buffers) ranks_[b.name] = b.shape.size();
  }

  std::string run(const Func& f) {
    if (f.body) stmt(*f.body);
    return problem_;
  }

 private:
  struct Binding {
    ScalarType type;
    bool assignable;  // a DeclareVar (an accumulator), which Assign may write
  };

  void fail(const std::string& message) {
    if (problem_.empty()) problem_ = message;
  }

  void bind(const std::string& name, ScalarType type, bool assignable) {
    if (scope_.count(name)) fail("variable '" + name + "' is bound again inside its own binding");
    scope_[name].push_back({type, assignable});
  }
  void unbind(const std::string& name) {
    auto it = scope_.find(name);
    it->second.pop_back();
    if (it->second.empty()) scope_.erase(it);
  }
  const Binding* binding(const std::string& name) const {
    auto it = scope_.find(name);
    return it == scope_.end() ? nullptr : &it->second.back();
  }

  void access(const std::string& buffer, size_t indices, const char* what) {
    if (allocated_.count(buffer)) {
      if (has_form(form_, LirForm::FlatAccesses) && indices != 1)
        fail(std::string(what) + " of '" + buffer + "' has " + std::to_string(indices) + " indices after flatten_storage");
      return;
    }
    auto rank = ranks_.find(buffer);
    if (rank == ranks_.end()) {
      fail(std::string(what) + " of '" + buffer + "', which is neither a buffer of the function nor allocated around it");
      return;
    }
    const bool flat = has_form(form_, LirForm::FlatAccesses);
    if (indices != 1 && (flat || indices != rank->second))
      fail(std::string(what) + " of '" + buffer + "' (rank " + std::to_string(rank->second) + ") has " +
           std::to_string(indices) + " indices" + (flat ? " after flatten_storage" : ""));
  }

  void expr(const Expr& e) {
    switch (e.kind) {
      case ExprKind::Var: {
        const Binding* b = binding(e.name);
        if (!b) fail("variable '" + e.name + "' is read outside the loop, let or declaration that binds it");
        else if (b->type != e.type)
          fail("variable '" + e.name + "' is read as " + std::string(ir::scalar_type_name(e.type)) + " but bound as " +
               std::string(ir::scalar_type_name(b->type)));
        return;
      }
      case ExprKind::Load:
        access(e.name, e.args.size(), "a load");
        if (e.boundary != ir::Boundary::None && has_form(form_, LirForm::NoBoundaries))
          fail("a load of '" + e.name + "' still has a boundary after lower_boundaries");
        if (e.pad) expr(*e.pad);
        break;
      case ExprKind::Reduce: {
        if (has_form(form_, LirForm::NoReductions)) fail("a reduction is left after lower_reductions");
        // Ranges may depend on the ranges outside them (triangular domains).
        for (const Range& r : e.ranges) {
          if (r.min) expr(*r.min);
          if (r.extent) expr(*r.extent);
          bind(r.var, ScalarType::Index, false);
        }
        for (const ExprP& a : e.args) expr(*a);
        for (auto r = e.ranges.rbegin(); r != e.ranges.rend(); ++r) unbind(r->var);
        return;
      }
      default:
        break;
    }
    for (const ExprP& a : e.args) expr(*a);
  }

  void non_negative(const ExprP& extent, const std::string& what) {
    if (extent && extent->kind == ExprKind::IntImm && extent->int_value < 0)
      fail(what + " has the negative extent " + std::to_string(extent->int_value));
  }

  void stmt(const Stmt& s) {
    switch (s.kind) {
      case StmtKind::For:
        expr(*s.min);
        expr(*s.extent);
        non_negative(s.extent, "loop '" + s.name + "'");
        if (s.for_kind == ForKind::GpuGridStride) grid_stride_loops_.insert(s.name);
        for (const Stmt::Prefetch& p : s.prefetches)
          if (!ranks_.count(p.tensor) && !allocated_.count(p.tensor))
            fail("loop '" + s.name + "' prefetches '" + p.tensor + "', which is not a buffer");
        bind(s.name, ScalarType::Index, false);
        stmt(*s.body);
        unbind(s.name);
        return;
      case StmtKind::Store:
        access(s.name, s.indices.size(), "a store");
        for (const ExprP& i : s.indices) expr(*i);
        expr(*s.value);
        return;
      case StmtKind::Assign: {
        const Binding* b = binding(s.name);
        if (!b || !b->assignable) fail("an assignment to '" + s.name + "', which is no declared variable in scope");
        expr(*s.value);
        return;
      }
      case StmtKind::LetStmt:
      case StmtKind::DeclareVar:
        if (s.value) expr(*s.value);
        bind(s.name, s.type, s.kind == StmtKind::DeclareVar);
        if (s.body) stmt(*s.body);
        unbind(s.name);
        return;
      case StmtKind::Block:
        for (const StmtP& c : s.stmts) stmt(*c);
        return;
      case StmtKind::IfThenElse:
        expr(*s.value);
        if (s.body) stmt(*s.body);
        if (s.else_body) stmt(*s.else_body);
        return;
      case StmtKind::Allocate:
        non_negative(s.extent, "the allocation of '" + s.name + "'");
        ++allocated_[s.name];
        if (s.body) stmt(*s.body);
        if (--allocated_[s.name] == 0) allocated_.erase(s.name);
        return;
      case StmtKind::Barrier:
        return;
      case StmtKind::Prefetch:
        access(s.name, s.indices.size(), "a prefetch");
        for (const ExprP& i : s.indices) expr(*i);
        return;
      case StmtKind::Kernel:
        kernel(s);
        return;
      case StmtKind::ThreadAllReduce:
        all_reduce(s);
        return;
    }
  }

  // A kernel runs on the device with the function's buffers and params as its arguments: the host
  // evaluates a grid-stride launch's extents outside it, and its body sees nothing bound around it.
  void kernel(const Stmt& k) {
    const std::string what = "kernel '" + k.name + "'";
    if (!kernel_.empty()) {
      fail(what + " is inside kernel '" + kernel_ + "'");
      return;
    }
    const Launch& launch = k.launch;
    if (launch.kind == LaunchKind::GridStride) {
      if (launch.loops.size() != launch.extents.size())
        fail(what + " launches over " + std::to_string(launch.loops.size()) + " loops with " +
             std::to_string(launch.extents.size()) + " extents");
      for (const ExprP& e : launch.extents) expr(*e);
    }
    auto outer_scope = std::move(scope_);
    auto outer_allocated = std::move(allocated_);
    scope_.clear();
    allocated_.clear();
    for (const Param& p : params_) bind(p.name, ScalarType::Index, false);
    kernel_ = k.name;
    grid_stride_loops_.clear();
    if (k.body) stmt(*k.body);
    // Its grid-stride loops are exactly those its launch spreads over the threads.
    const std::set<std::string> launched = launch.kind == LaunchKind::GridStride
                                               ? std::set<std::string>(launch.loops.begin(), launch.loops.end())
                                               : std::set<std::string>{};
    if (grid_stride_loops_ != launched)
      fail(what + " has grid-stride loops {" + joined(grid_stride_loops_) + "} but launches over {" + joined(launched) +
           "}");
    kernel_.clear();
    scope_ = std::move(outer_scope);
    allocated_ = std::move(outer_allocated);
  }

  void all_reduce(const Stmt& s) {
    if (kernel_.empty()) fail("a thread all-reduce outside any kernel");
    if (s.gpu_axis < 0 || s.gpu_axis > 2) fail("a thread all-reduce along axis " + std::to_string(s.gpu_axis));
    for (const Stmt::Combine& c : s.combines) {
      const std::string what = "a thread all-reduce of '" + c.var + "'";
      const Binding* b = binding(c.var);
      if (!b || !b->assignable)
        fail(what + ", which is no declared variable in scope");
      else if (b->type != c.type)
        fail(what + " as " + std::string(ir::scalar_type_name(c.type)) + ", declared " +
             std::string(ir::scalar_type_name(b->type)));
      if (!c.slots.empty() && !allocated_.count(c.slots))
        fail(what + " through '" + c.slots + "', which is not allocated around it");
    }
  }

  static std::string joined(const std::set<std::string>& names) {
    std::string s;
    for (const std::string& n : names) s += (s.empty() ? "" : ", ") + n;
    return s;
  }

  LirForm form_;
  std::vector<Param> params_;
  std::map<std::string, size_t> ranks_;               // the function's buffers
  std::map<std::string, int> allocated_;              // Allocates around the current node
  std::map<std::string, std::vector<Binding>> scope_;  // variables in scope, innermost last
  std::string kernel_;                                 // the Kernel around the current node, if any
  std::set<std::string> grid_stride_loops_;            // those of the current kernel
  std::string problem_;
};

}  // namespace

std::string lir_problem(const Func& f, LirForm form) { return LirChecker(f, form).run(f); }

void verify_lir(const Func& f, LirForm form, std::string_view after_pass) {
  std::string problem = lir_problem(f, form);
  if (!problem.empty())
    throw MalformedLir("the loop IR is malformed after pass '" + std::string(after_pass) + "': " + problem);
}

}  // namespace ekb::lir
