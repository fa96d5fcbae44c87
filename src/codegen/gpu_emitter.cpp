#include "codegen/gpu_emitter.h"

#include <algorithm>
#include <cctype>
#include <functional>
#include <numeric>
#include <optional>
#include <stdexcept>

#include "lower/lower_reductions.h"
#include "lower/mutator.h"
#include "lower/simplify.h"

namespace ekb::codegen {

using lir::Expr;
using lir::ExprKind;
using lir::Stmt;
using lir::StmtKind;

namespace {

bool any_expr(const Expr& e, const std::function<bool(const Expr&)>& pred) {
  if (pred(e)) return true;
  for (const auto& a : e.args)
    if (a && any_expr(*a, pred)) return true;
  return false;
}

bool any_stmt(const Stmt& s, const std::function<bool(const Stmt&)>& pred) {
  if (pred(s)) return true;
  if (s.body && any_stmt(*s.body, pred)) return true;
  if (s.else_body && any_stmt(*s.else_body, pred)) return true;
  for (const auto& c : s.stmts)
    if (c && any_stmt(*c, pred)) return true;
  return false;
}

}  // namespace

bool GpuEmitter::mentions(const std::string& text, const std::string& name) {
  auto is_ident = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
  for (size_t p = text.find(name); p != std::string::npos; p = text.find(name, p + 1)) {
    bool starts = p == 0 || !is_ident(text[p - 1]);
    bool ends = p + name.size() == text.size() || !is_ident(text[p + name.size()]);
    if (starts && ends) return true;
  }
  return false;
}

std::vector<const Stmt*> GpuEmitter::parallel_loops(const Stmt& stage) const {
  std::vector<const Stmt*> loops;
  for (const Stmt* s = &stage; s->kind == StmtKind::For && s->for_kind == lir::ForKind::GpuGridStride; s = s->body.get())
    loops.push_back(s);
  return loops;
}

std::string GpuEmitter::print(const Stmt& s, int indent) {
  std::string saved = std::move(out_);
  out_.clear();
  stmt(s, indent);
  std::string text = std::move(out_);
  out_ = std::move(saved);
  return text;
}

std::string GpuEmitter::context_lines(const std::vector<const Stmt*>& context, const std::string& code) {
  // Only what `code` uses (and what that uses in turn): a kernel declares no unused temps.
  std::vector<std::string> lines(context.size());
  std::string used = code;
  for (size_t i = context.size(); i-- > 0;) {
    const Stmt* c = context[i];
    if (!mentions(used, c->name)) continue;
    if (c->kind == StmtKind::Allocate) lines[i] = allocation(*c, "  ");
    else lines[i] = "  const " + value_type(c->type) + " " + c->name + " = " + expr(*c->value) + ";\n";
    used += lines[i];
  }
  std::string s;
  for (const std::string& l : lines) s += l;
  return s;
}

std::string GpuEmitter::parallel_kernel(const std::vector<const Stmt*>& context,
                                        const std::vector<const Stmt*>& loops) {
  const std::string name = "ekb_kernel_" + std::to_string(kernel_count_++);
  std::string vars;
  for (const Stmt* l : loops) vars += (vars.empty() ? "" : ", ") + l->name;
  std::vector<std::string> extents;  // each clamped at 0, so that the product is the iteration count
  for (const Stmt* l : loops) {
    std::string e = expr(*l->extent);
    extents.push_back("(" + e + " > 0 ? " + e + " : 0)");
  }

  std::string k = kernel_head(name, vars + " over " + thread_space_name());
  std::string body = print(*loops.back()->body, 4);
  std::string code = body;
  for (const Stmt* l : loops) code += expr(*l->min) + " " + expr(*l->extent) + "\n";
  k += context_lines(context, code);
  for (size_t i = 0; i < extents.size(); ++i)
    k += "  const int64_t ekb_extent_" + std::to_string(i) + " = " + extents[i] + ";\n";
  k += "  const int64_t ekb_count = ";
  for (size_t i = 0; i < extents.size(); ++i) k += (i ? " * " : "") + std::string("ekb_extent_") + std::to_string(i);
  k += ";\n"
       "  for (int64_t ekb_flat = " + global_thread_index() + "; ekb_flat < ekb_count;\n"
       "       ekb_flat += " + global_thread_count() + ") {\n"
       "    int64_t ekb_rest = ekb_flat;\n";
  for (size_t i = loops.size(); i-- > 0;) {  // innermost varies fastest: adjacent threads, adjacent elements
    const std::string ext = "ekb_extent_" + std::to_string(i);
    if (i == 0) {
      k += "    const int64_t " + loops[i]->name + " = " + expr(*loops[i]->min) + " + ekb_rest;\n";
    } else {
      k += "    const int64_t " + loops[i]->name + " = " + expr(*loops[i]->min) + " + ekb_rest % " + ext + ";\n";
      k += "    ekb_rest /= " + ext + ";\n";
    }
  }
  k += body + "  }\n}\n\n";
  kernels_ += k;

  std::vector<const Expr*> extent_exprs;
  for (const Stmt* l : loops) extent_exprs.push_back(l->extent.get());
  return launch_over(name, extent_exprs);
}

std::string GpuEmitter::serial_kernel(const std::vector<const Stmt*>& context, const std::vector<const Stmt*>& stages) {
  const std::string name = "ekb_kernel_" + std::to_string(kernel_count_++);
  std::string k = kernel_head(name, "sequential: one thread");
  std::string body;
  for (const Stmt* s : stages) body += print(*s, 2);
  k += context_lines(context, body) + body + "}\n\n";
  kernels_ += k;
  return launch_single_thread(name);
}

std::string GpuEmitter::entry_body() {
  kernels_.clear();
  kernel_count_ = 0;
  if (!f_.body) return "";
  // The allocations and lets around the whole body are repeated in every kernel.
  std::vector<const Stmt*> context;
  const Stmt* s = f_.body.get();
  while (s->kind == StmtKind::Allocate || s->kind == StmtKind::LetStmt) {
    context.push_back(s);
    s = s->body.get();
  }
  // Only scratch temps outlive a kernel, and only lets that read inputs give every kernel the same value.
  const bool splittable = std::all_of(context.begin(), context.end(), [&](const Stmt* c) {
    if (c->kind == StmtKind::Allocate) return c->scope == lir::MemoryScope::Scratch;
    return !any_expr(*c->value, [&](const Expr& x) {
      const lir::Buffer* b = x.kind == ExprKind::Load ? f_.buffer(x.name) : nullptr;
      return b && b->role != lir::BufferRole::Input;
    });
  });
  std::vector<const Stmt*> stages;
  if (!splittable) {
    context.clear();
    stages.push_back(f_.body.get());
  } else if (s->kind == StmtKind::Block) {
    for (const auto& c : s->stmts) stages.push_back(c.get());
  } else {
    stages.push_back(s);
  }

  std::string launches;
  std::vector<const Stmt*> sequential;
  auto flush_sequential = [&] {
    if (!sequential.empty()) launches += serial_kernel(context, sequential);
    sequential.clear();
  };
  for (const Stmt* st : stages) {
    if (lir::has_gpu_bound_loops(*st)) {  // the IR solution's schedule says how it runs
      flush_sequential();
      launches += bound_kernel(context, *st);
      continue;
    }
    std::vector<const Stmt*> loops = parallel_loops(*st);
    if (loops.empty()) {
      sequential.push_back(st);
      continue;
    }
    flush_sequential();
    launches += parallel_kernel(context, loops);
  }
  flush_sequential();
  return launches;
}

// ------------------------------------------------------------------------------- bound kernels
std::string GpuEmitter::bound_kernel(const std::vector<const Stmt*>& context, const Stmt& stage) {
  const std::string name = "ekb_kernel_" + std::to_string(kernel_count_++);
  const lir::KernelGeometry g = lir::gpu_kernel_geometry(f_, stage);
  geometry_ = &g;
  let_values_.clear();
  reduction_shared_.clear();
  private_buffers_.clear();
  per_thread_depth_ = 0;
  std::string body = print(stage, 2);
  geometry_ = nullptr;
  // Shared buffers live for the whole kernel, declared at its top (OpenCL allows no other place).
  std::string shared = reduction_shared_;
  lir::for_each_stmt(stage, [&](const Stmt& x) {
    if (x.kind == StmtKind::Allocate && x.scope == lir::MemoryScope::Shared) shared += shared_declaration(x);
  });
  auto dims = [](const std::array<int64_t, 3>& d) {
    return std::to_string(d[0]) + " x " + std::to_string(d[1]) + " x " + std::to_string(d[2]);
  };
  std::string what = "the schedule's kernel: " + dims(g.grid) + " blocks of " + dims(g.block) + " threads";
  if (g.shared_bytes > 0) what += ", " + std::to_string(g.shared_bytes) + " bytes of shared memory";
  kernels_ += kernel_head(name, what) + context_lines(context, body + shared) + shared + body + "}\n\n";
  return g.empty() ? "" : launch_geometry(name, g);
}

void GpuEmitter::stmt(const Stmt& s, int indent) {
  if (!geometry_) return CEmitter::stmt(s, indent);
  const std::string pad(static_cast<size_t>(indent), ' ');
  if (s.kind == StmtKind::Barrier) {
    out_ += pad + barrier_statement() + "\n";
    return;
  }
  if (s.kind == StmtKind::Allocate && s.scope == lir::MemoryScope::Shared) return stmt(*s.body, indent);  // hoisted
  if (s.kind == StmtKind::Allocate) private_buffers_.insert(s.name);
  if (s.kind == StmtKind::LetStmt) let_values_[s.name] = s.value;
  if (s.kind == StmtKind::Store && geometry_->has_thread_loops && per_thread_depth_ == 0 &&
      !private_buffers_.count(s.name)) {
    // Outside the thread loops (and cooperative copies) every thread holds the same value
    // (schedule_bind checked it): the block's first thread stores it.
    out_ += pad + "if (" + thread_rank() + " == 0) {\n";
    CEmitter::stmt(s, indent + 2);
    out_ += pad + "}\n";
    return;
  }
  if (s.kind != StmtKind::For) return CEmitter::stmt(s, indent);
  switch (s.for_kind) {
    case lir::ForKind::GpuBlock:
      // The grid has exactly the loop's extent along this axis: no guard.
      out_ += pad + "const int64_t " + s.name + " = " + expr(*s.min) + " + (int64_t)" + block_index(s.gpu_axis) + ";\n";
      return stmt(*s.body, indent);
    case lir::ForKind::GpuThread:
      return thread_loop(s, indent);
    case lir::ForKind::GpuCooperative:
      return cooperative_nest(s, indent);
    default:
      return CEmitter::stmt(s, indent);
  }
}

std::string GpuEmitter::thread_rank() const {
  const lir::KernelGeometry& g = *geometry_;
  std::string rank = "(int64_t)" + thread_index(0);
  if (g.block[1] > 1 || g.block[2] > 1) rank += " + " + std::to_string(g.block[0]) + " * (int64_t)" + thread_index(1);
  if (g.block[2] > 1) rank += " + " + std::to_string(g.block[0] * g.block[1]) + " * (int64_t)" + thread_index(2);
  return rank;
}

void GpuEmitter::thread_loop(const Stmt& s, int indent) {
  if (s.extent->kind != ExprKind::IntImm)
    throw std::logic_error("GPU emitter: loop '" + s.name + "' bound to threads has no constant extent");
  const std::string pad(static_cast<size_t>(indent), ' ');
  const std::vector<lir::ThreadAccumulator> accumulators = lir::thread_accumulators(s);
  // Each thread accumulates its part from the identity; what the accumulator held before (an
  // enclosing loop's running total, the same in every thread) joins the combined parts after.
  const std::string id = std::to_string(reduction_count_++);
  std::vector<std::string> before;
  for (const lir::ThreadAccumulator& a : accumulators) {
    before.push_back("ekb_before" + id + "_" + a.var);
    out_ += pad + "const " + value_type(a.type) + " " + before.back() + " = " + a.var + ";\n";
    out_ += pad + a.var + " = " + expr(*lir::combine_identity(a.op, a.type)) + ";\n";
  }
  out_ += pad + "{\n";
  ++per_thread_depth_;
  out_ += pad + "  const int64_t " + s.name + " = " + expr(*s.min) + " + (int64_t)" + thread_index(s.gpu_axis) + ";\n";
  if (s.extent->int_value >= geometry_->block[s.gpu_axis]) {
    stmt(*s.body, indent + 2);
  } else {
    // A smaller loop than the block along this axis: the extra threads skip it.
    out_ += pad + "  if ((int64_t)" + thread_index(s.gpu_axis) + " < " + std::to_string(s.extent->int_value) + ") {\n";
    stmt(*s.body, indent + 4);
    out_ += pad + "  }\n";
  }
  --per_thread_depth_;
  out_ += pad + "}\n";
  if (accumulators.empty()) return;
  combine_over_threads(accumulators, s.gpu_axis, id, indent);
  for (size_t i = 0; i < accumulators.size(); ++i)
    out_ += pad + combine_statement(accumulators[i], before[i]) + "\n";
}

std::string GpuEmitter::combine_statement(const lir::ThreadAccumulator& a, const std::string& other) {
  lir::ExprP combined = lir::binary(a.op, lir::var(a.var, a.type), lir::var(other, a.type));
  return a.var + " = " + expr(*combined) + ";";
}

void GpuEmitter::combine_over_threads(const std::vector<lir::ThreadAccumulator>& accumulators, int axis,
                                      const std::string& id, int indent) {
  const lir::KernelGeometry& g = *geometry_;
  const std::string pad(static_cast<size_t>(indent), ' ');
  const int64_t width = g.block[axis];  // threads taking part along the axis (those past the loop hold the identity)
  if (width <= 1) return;               // one thread along the axis: its part is the whole
  out_ += pad + "{ /* cooperative reduction over " + std::string(1, "xyz"[axis]) + ": " + std::to_string(width) +
          " threads */\n";
  const bool shuffles = axis == 0 && width % 32 == 0 &&
                        std::all_of(accumulators.begin(), accumulators.end(), [&](const lir::ThreadAccumulator& a) {
                          return !warp_exchange(a.var, a.type, 1).empty();
                        });
  const std::string guard = warp_exchange_condition();
  // One set of shared slots serves whichever path the compiler keeps: a slot per thread for the
  // tree, one per warp for the shuffles.
  const int64_t slots = !shuffles || !guard.empty() ? g.threads() : width / 32 > 1 ? g.threads() / 32 : 0;
  for (const lir::ThreadAccumulator& a : accumulators)
    if (slots > 0) {
      auto alloc = lir::make_allocate(reduction_slots(a, id), a.type == ScalarType::Index ? ScalarType::I64 : a.type,
                                      slots, lir::MemoryScope::Shared, lir::make_block({}));
      reduction_shared_ += shared_declaration(*alloc);
    }
  if (shuffles && guard.empty()) {
    combine_by_shuffles(accumulators, id, indent);
  } else if (shuffles) {
    out_ += "#if " + guard + "\n";
    combine_by_shuffles(accumulators, id, indent);
    out_ += "#else\n";
    combine_by_tree(accumulators, axis, id, indent);
    out_ += "#endif\n";
  } else {
    combine_by_tree(accumulators, axis, id, indent);
  }
  out_ += pad + "}\n";
}

std::string GpuEmitter::reduction_slots(const lir::ThreadAccumulator& a, const std::string& id) const {
  return "ekb_red" + id + "_" + a.var;
}

void GpuEmitter::combine_by_shuffles(const std::vector<lir::ThreadAccumulator>& accumulators, const std::string& id,
                                     int indent) {
  // Butterfly within each warp (every lane ends with the warp's total), one slot per warp, then
  // every warp combines its row's warp totals the same way over all 32 lanes (lanes past the
  // warp count hold the identity): all threads hold the row's total. A butterfly over only the
  // first `warps` lanes would leave the total in those lanes and the identity in the others.
  const lir::KernelGeometry& g = *geometry_;
  const std::string pad2(static_cast<size_t>(indent) + 2, ' ');
  const int64_t width = g.block[0];
  auto butterfly = [&](int64_t lanes) {
    for (int64_t m = lanes / 2; m >= 1; m /= 2)
      for (const lir::ThreadAccumulator& a : accumulators) {
        const std::string other = "ekb_lane_" + a.var;
        out_ += pad2 + "{ const " + value_type(a.type) + " " + other + " = " +
                warp_exchange(a.var, a.type, static_cast<int>(m)) + "; " + combine_statement(a, other) + " }\n";
      }
  };
  butterfly(32);
  const int64_t warps = width / 32;
  if (warps <= 1) return;
  const std::string barrier = pad2 + barrier_statement() + "\n";
  const std::string rank = "(" + thread_rank() + ")";
  const std::string lane = "((int64_t)" + thread_index(0) + " % 32)";
  const std::string row_first = "(" + rank + " / " + std::to_string(width) + " * " + std::to_string(warps) + ")";
  for (const lir::ThreadAccumulator& a : accumulators)
    out_ += pad2 + "if (" + lane + " == 0) " + reduction_slots(a, id) + "[" + rank + " / 32] = " + a.var + ";\n";
  out_ += barrier;
  for (const lir::ThreadAccumulator& a : accumulators)
    out_ += pad2 + a.var + " = " + lane + " < " + std::to_string(warps) + " ? " + reduction_slots(a, id) + "[" +
            row_first + " + " + lane + "] : " + expr(*lir::combine_identity(a.op, a.type)) + ";\n";
  butterfly(32);
  out_ += barrier;  // the slots are free again (a reduction in a later iteration reuses them)
}

void GpuEmitter::combine_by_tree(const std::vector<lir::ThreadAccumulator>& accumulators, int axis,
                                 const std::string& id, int indent) {
  // A tree in shared memory: at each step the lower half of the threads still taking part adds
  // the upper half's values, then all read the total from the first thread along the axis.
  const lir::KernelGeometry& g = *geometry_;
  const std::string pad2(static_cast<size_t>(indent) + 2, ' ');
  const std::string barrier = pad2 + barrier_statement() + "\n";
  const int64_t width = g.block[axis];
  int64_t stride = 1;  // between neighbours along the axis, in ranks
  for (int d = 0; d < axis; ++d) stride *= g.block[d];
  const std::string rank = "(" + thread_rank() + ")";
  const std::string t = "(int64_t)" + thread_index(axis);
  for (const lir::ThreadAccumulator& a : accumulators)
    out_ += pad2 + reduction_slots(a, id) + "[" + rank + "] = " + a.var + ";\n";
  out_ += barrier;
  int64_t half = 1;
  while (half * 2 < width) half *= 2;
  for (int64_t h = half; h >= 1; h /= 2) {
    const int64_t active = std::min(h, width - h);  // threads t < active combine with t + h
    out_ += pad2 + "if (" + t + " < " + std::to_string(active) + ") {\n";
    for (const lir::ThreadAccumulator& a : accumulators) {
      const std::string mine = reduction_slots(a, id) + "[" + rank + "]";
      const std::string theirs = reduction_slots(a, id) + "[" + rank + " + " + std::to_string(h * stride) + "]";
      lir::ExprP combined = lir::binary(a.op, lir::var("ekb_mine", a.type), lir::var("ekb_theirs", a.type));
      out_ += pad2 + "  { const " + value_type(a.type) + " ekb_mine = " + mine + ", ekb_theirs = " + theirs + "; " +
              mine + " = " + expr(*combined) + "; }\n";
    }
    out_ += pad2 + "}\n" + barrier;
  }
  for (const lir::ThreadAccumulator& a : accumulators)
    out_ += pad2 + a.var + " = " + reduction_slots(a, id) + "[" + rank + " - " + t + " * " + std::to_string(stride) +
            "];\n";
  out_ += barrier;  // every thread has read its total before the slots are reused
}

namespace {

// The turns a cooperative copy nest takes between the threads: the product of its loops' extents,
// the innermost counted in groups of `group` (4 floats per load), where every extent is a constant.
std::optional<int64_t> constant_count(const std::vector<const Stmt*>& loops, int64_t group) {
  int64_t total = 1;
  for (size_t i = 0; i < loops.size(); ++i) {
    const Expr& e = *loops[i]->extent;
    if (e.kind != ExprKind::IntImm) return std::nullopt;
    total *= std::max<int64_t>(i + 1 == loops.size() ? e.int_value / group : e.int_value, 0);
  }
  return total;
}

}  // namespace

void GpuEmitter::cooperative_nest(const Stmt& nest, int indent) {
  std::vector<const Stmt*> loops;
  const Stmt* s = &nest;
  for (; s->kind == StmtKind::For && s->for_kind == lir::ForKind::GpuCooperative; s = s->body.get()) loops.push_back(s);
  const std::string p = "ekb_coop" + std::to_string(cooperative_count_++);
  const std::string pad(static_cast<size_t>(indent), ' '), pad2 = pad + "  ", pad4 = pad2 + "  ";
  const lir::KernelGeometry& g = *geometry_;
  // The block's threads take consecutive elements.
  const std::string rank = thread_rank();
  if (vectorized_copy(loops, *s, indent, rank, p)) return;
  out_ += pad + "{ /* cooperative copy: the block's " + std::to_string(g.threads()) + " threads take turns */\n";
  std::string count;
  for (size_t i = 0; i < loops.size(); ++i) {
    const std::string e = expr(*loops[i]->extent), ext = p + "_extent" + std::to_string(i);
    out_ += pad2 + "const int64_t " + ext + " = " + e + " > 0 ? " + e + " : 0;\n";
    count += (count.empty() ? "" : " * ") + ext;
  }
  open_cooperative_turns(p, rank, count, constant_count(loops, 1), pad2);
  out_ += pad4 + "int64_t " + p + "_rest = " + p + "_flat;\n";
  for (size_t i = loops.size(); i-- > 0;) {  // innermost fastest: adjacent threads, adjacent elements
    const std::string ext = p + "_extent" + std::to_string(i);
    if (i == 0) {
      out_ += pad4 + "const int64_t " + loops[i]->name + " = " + expr(*loops[i]->min) + " + " + p + "_rest;\n";
    } else {
      out_ += pad4 + "const int64_t " + loops[i]->name + " = " + expr(*loops[i]->min) + " + " + p + "_rest % " + ext + ";\n";
      out_ += pad4 + p + "_rest /= " + ext + ";\n";
    }
  }
  ++per_thread_depth_;  // each thread stores its own elements
  stmt(*s, indent + 4);
  --per_thread_depth_;
  out_ += pad2 + "}\n" + pad + "}\n";
}

namespace {

// The coefficient of `var` in the affine expression e (nullopt when e is not affine in it).
std::optional<int64_t> coefficient(const Expr& e, const std::string& var) {
  switch (e.kind) {
    case ExprKind::IntImm:
      return 0;
    case ExprKind::Var:
      return e.name == var ? 1 : 0;
    case ExprKind::Binary: {
      auto a = coefficient(*e.args[0], var), b = coefficient(*e.args[1], var);
      if (!a || !b) return std::nullopt;
      if (e.bin_op == lir::BinOp::Add) return *a + *b;
      if (e.bin_op == lir::BinOp::Sub) return *a - *b;
      if (e.bin_op == lir::BinOp::Mul) {
        if (*a == 0 && e.args[0]->kind == ExprKind::IntImm) return e.args[0]->int_value * *b;
        if (*b == 0 && e.args[1]->kind == ExprKind::IntImm) return *a * e.args[1]->int_value;
        if (*a == 0 && *b == 0) return 0;
        return std::nullopt;
      }
      if (*a == 0 && *b == 0) return 0;
      return std::nullopt;
    }
    default:
      return lir::uses_var(e, var) ? std::nullopt : std::optional<int64_t>(0);
  }
}

}  // namespace

void GpuEmitter::open_cooperative_turns(const std::string& p, const std::string& rank, const std::string& count,
                                        std::optional<int64_t> constant_count, const std::string& pad) {
  const int64_t threads = geometry_->threads();
  const std::string flat = p + "_flat";
  if (!constant_count) {
    out_ += pad + "for (int64_t " + flat + " = " + rank + "; " + flat + " < " + count + "; " + flat +
            " += " + std::to_string(threads) + ") {\n";
    return;
  }
  // A loop from the rank to the count has a trip count the compiler cannot know (it depends on
  // the thread), so it stays a loop that waits for each load before the next; a known number of
  // turns unrolls, and the loads of all turns are in flight at once.
  const int64_t turns = (*constant_count + threads - 1) / threads;
  if (turns <= 16) out_ += pad + "#pragma unroll\n";
  out_ += pad + "for (int64_t " + p + "_turn = 0; " + p + "_turn < " + std::to_string(turns) + "; ++" + p +
          "_turn) {\n";
  out_ += pad + "  const int64_t " + flat + " = " + rank + " + " + p + "_turn * " + std::to_string(threads) + ";\n";
  if (*constant_count % threads != 0) out_ += pad + "  if (" + flat + " >= " + count + ") break;\n";
}

int64_t GpuEmitter::known_multiple(const Expr& e) const {
  constexpr int64_t kMax = 16;  // float4 needs 4; more is never asked
  auto gcd = [](int64_t a, int64_t b) { return std::gcd(a, b); };
  switch (e.kind) {
    case ExprKind::IntImm:
      return e.int_value == 0 ? kMax : gcd(kMax, e.int_value < 0 ? -e.int_value : e.int_value);
    case ExprKind::Var: {
      auto it = let_values_.find(e.name);
      return it != let_values_.end() ? known_multiple(*it->second) : 1;
    }
    case ExprKind::Cast:
      return ir::is_float(e.type) ? 1 : known_multiple(*e.args[0]);
    case ExprKind::Binary:
      switch (e.bin_op) {
        case lir::BinOp::Add:
        case lir::BinOp::Sub:
        case lir::BinOp::Min:
        case lir::BinOp::Max:
          return gcd(known_multiple(*e.args[0]), known_multiple(*e.args[1]));
        case lir::BinOp::Mul:
          return std::min(kMax, known_multiple(*e.args[0]) * known_multiple(*e.args[1]));
        default:
          return 1;
      }
    default:
      return 1;
  }
}

bool GpuEmitter::vectorized_copy(const std::vector<const Stmt*>& loops, const Stmt& copy, int indent,
                                 const std::string& rank, const std::string& p) {
  const Stmt& inner = *loops.back();
  if (copy.kind != StmtKind::Store || copy.value->kind != ExprKind::Load || copy.indices.size() != 1) return false;
  const Expr& load = *copy.value;
  const lir::Buffer* src = f_.buffer(load.name);
  const lir::Buffer* dst = f_.buffer(copy.name);
  if (!src || !dst || src->type != ScalarType::F32 || dst->type != ScalarType::F32 || load.args.size() != 1) return false;
  if (inner.extent->kind != ExprKind::IntImm || inner.extent->int_value % 4 != 0) return false;
  // Loads: consecutive elements, the first of every group of 4 aligned to 16 bytes.
  auto aligned_run = [&](const lir::ExprP& index) {
    return coefficient(*index, inner.name) == std::optional<int64_t>(1) &&
           known_multiple(*lir::substitute(index, inner.name, inner.min)) % 4 == 0;
  };
  if (!aligned_run(load.args[0])) return false;
  const bool vector_store = aligned_run(copy.indices[0]);
  const bool shared_dst = true;  // cooperative copies fill shared caches

  const lir::KernelGeometry& g = *geometry_;
  const std::string pad(static_cast<size_t>(indent), ' '), pad2 = pad + "  ", pad4 = pad2 + "  ";
  out_ += pad + "{ /* cooperative copy, 4 floats per load: the block's " + std::to_string(g.threads()) +
          " threads take turns */\n";
  std::string count;
  for (size_t i = 0; i < loops.size(); ++i) {
    const std::string ext = p + "_extent" + std::to_string(i);
    std::string e = expr(*loops[i]->extent);
    if (i + 1 == loops.size()) e = std::to_string(inner.extent->int_value / 4);  // groups of 4
    out_ += pad2 + "const int64_t " + ext + " = " + e + " > 0 ? " + e + " : 0;\n";
    count += (count.empty() ? "" : " * ") + ext;
  }
  open_cooperative_turns(p, rank, count, constant_count(loops, 4), pad2);
  out_ += pad4 + "int64_t " + p + "_rest = " + p + "_flat;\n";
  for (size_t i = loops.size(); i-- > 0;) {
    const std::string ext = p + "_extent" + std::to_string(i);
    const std::string step = i + 1 == loops.size() ? "4 * " : "";  // the innermost counts groups of 4
    if (i == 0) {
      out_ += pad4 + "const int64_t " + loops[i]->name + " = " + expr(*loops[i]->min) + " + " + step + p + "_rest;\n";
    } else {
      out_ += pad4 + "const int64_t " + loops[i]->name + " = " + expr(*loops[i]->min) + " + " + step + "(" + p +
              "_rest % " + ext + ");\n";
      out_ += pad4 + p + "_rest /= " + ext + ";\n";
    }
  }
  const std::string value = p + "_v";
  out_ += pad4 + "const float4 " + value + " = " + float4_at(load.name, expr(*load.args[0]), false, false) + ";\n";
  if (vector_store) {
    out_ += pad4 + float4_at(copy.name, expr(*copy.indices[0]), shared_dst, true) + " = " + value + ";\n";
  } else {
    const char* lanes[] = {"x", "y", "z", "w"};
    for (int lane = 0; lane < 4; ++lane) {
      lir::ExprP at = lir::substitute(copy.indices[0], inner.name,
                                      lir::binary(lir::BinOp::Add, lir::var(inner.name, ScalarType::Index),
                                                  lir::index_imm(lane)));
      out_ += pad4 + copy.name + "[" + expr(*lir::simplify(at)) + "] = " + value + "." + lanes[lane] + ";\n";
    }
  }
  out_ += pad2 + "}\n" + pad + "}\n";
  return true;
}

}  // namespace ekb::codegen
