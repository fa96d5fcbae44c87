// The kernel statements of the loop IR as the GPU languages print them (CudaEmitter,
// OpenCLEmitter), through CLikeEmitter's spelling hooks: what each kernel runs and how its loops
// map to threads was decided by the passes (map_grid_stride, outline_kernels,
// lower_thread_reductions, schedule_bind); this prints their forms.
#include <algorithm>
#include <optional>
#include <stdexcept>

#include "codegen/c_like_emitter.h"

namespace ekb::codegen {

using lir::Expr;
using lir::ExprKind;
using lir::Stmt;
using lir::StmtKind;

// ------------------------------------------------------------------------------- kernel spellings
// The defaults: a target without kernels never prints a kernel statement.
namespace {
[[noreturn]] void no_kernels(const char* what) {
  throw std::logic_error(std::string("emitter: ") + what + " on a target without kernels");
}
}  // namespace

std::string CLikeEmitter::kernel_head(const std::string&, const std::string&) const { no_kernels("a kernel"); }
std::string CLikeEmitter::thread_space_name() const { no_kernels("a kernel"); }
std::string CLikeEmitter::launch_single_thread(const std::string&) { no_kernels("a launch"); }
std::string CLikeEmitter::launch_over(const std::string&, const lir::Launch&) { no_kernels("a launch"); }
std::string CLikeEmitter::launch_geometry(const std::string&, const lir::KernelGeometry&) { no_kernels("a launch"); }
std::string CLikeEmitter::global_thread_index() const { no_kernels("a thread index"); }
std::string CLikeEmitter::global_thread_count() const { no_kernels("a thread count"); }
std::string CLikeEmitter::block_index(int) const { no_kernels("a block index"); }
std::string CLikeEmitter::thread_index(int) const { no_kernels("a thread index"); }
std::string CLikeEmitter::barrier_statement() const { no_kernels("a barrier"); }
std::string CLikeEmitter::shared_declaration(const Stmt&) const { no_kernels("shared memory"); }
std::string CLikeEmitter::float4_at(const std::string&, const std::string&, bool, bool) const { no_kernels("a float4"); }
std::string CLikeEmitter::warp_exchange(const std::string&, ScalarType, int) const { no_kernels("a warp shuffle"); }
std::string CLikeEmitter::warp_exchange_condition() const { no_kernels("a warp shuffle"); }

// ------------------------------------------------------------------------------- kernels
void CLikeEmitter::kernel(const Stmt& k) {
  const lir::Launch& l = k.launch;
  std::string what;
  switch (l.kind) {
    case lir::LaunchKind::Single:
      what = "sequential: one thread";
      break;
    case lir::LaunchKind::GridStride:
      for (const std::string& v : l.loops) what += (what.empty() ? "" : ", ") + v;
      what += " over " + thread_space_name();
      break;
    case lir::LaunchKind::Grid: {
      const lir::KernelGeometry& g = l.geometry;
      auto dims = [](const std::array<int64_t, 3>& d) {
        return std::to_string(d[0]) + " x " + std::to_string(d[1]) + " x " + std::to_string(d[2]);
      };
      what = "the schedule's kernel: " + dims(g.grid) + " blocks of " + dims(g.block) + " threads";
      if (g.shared_bytes > 0) what += ", " + std::to_string(g.shared_bytes) + " bytes of shared memory";
      break;
    }
  }
  std::string launches = std::move(out_);
  out_.clear();
  launch_ = &l;
  stmt(*k.body, 2);
  launch_ = nullptr;
  kernels_ += kernel_head(k.name, what) + out_ + "}\n\n";
  out_ = std::move(launches);
  switch (l.kind) {
    case lir::LaunchKind::Single:
      out_ += launch_single_thread(k.name);
      break;
    case lir::LaunchKind::GridStride:
      out_ += launch_over(k.name, l);
      break;
    case lir::LaunchKind::Grid:
      if (!l.geometry.empty()) out_ += launch_geometry(k.name, l.geometry);
      break;
  }
}

void CLikeEmitter::gpu_loop(const Stmt& s, int indent) {
  const std::string pad(static_cast<size_t>(indent), ' ');
  switch (s.for_kind) {
    case lir::ForKind::GpuBlock:
      // The grid has exactly the loop's extent along this axis: no guard.
      out_ += pad + "const int64_t " + s.name + " = " + expr(*s.min) + " + (int64_t)" + block_index(s.gpu_axis) + ";\n";
      return stmt(*s.body, indent);
    case lir::ForKind::GpuThread:
      return thread_loop(s, indent);
    case lir::ForKind::GpuCooperative:
      return cooperative_nest(s, indent);
    case lir::ForKind::GpuGridStride:
      return grid_stride_nest(s, indent);
    default:
      throw std::logic_error("emitter: not a loop of a kernel");
  }
}

void CLikeEmitter::grid_stride_nest(const Stmt& nest, int indent) {
  std::vector<const Stmt*> loops;
  const Stmt* s = &nest;
  for (; s->kind == StmtKind::For && s->for_kind == lir::ForKind::GpuGridStride; s = s->body.get()) loops.push_back(s);
  const std::string pad(static_cast<size_t>(indent), ' '), pad2 = pad + "  ";
  // Each extent clamped at 0, so that the product is the iteration count.
  for (size_t i = 0; i < loops.size(); ++i) {
    const std::string e = expr(*loops[i]->extent);
    out_ += pad + "const int64_t ekb_extent_" + std::to_string(i) + " = (" + e + " > 0 ? " + e + " : 0);\n";
  }
  out_ += pad + "const int64_t ekb_count = ";
  for (size_t i = 0; i < loops.size(); ++i) out_ += (i ? " * " : "") + std::string("ekb_extent_") + std::to_string(i);
  out_ += ";\n" + pad + "for (int64_t ekb_flat = " + global_thread_index() + "; ekb_flat < ekb_count;\n" + pad +
          "     ekb_flat += " + global_thread_count() + ") {\n" + pad2 + "int64_t ekb_rest = ekb_flat;\n";
  for (size_t i = loops.size(); i-- > 0;) {  // innermost varies fastest: adjacent threads, adjacent elements
    const std::string ext = "ekb_extent_" + std::to_string(i);
    if (i == 0) {
      out_ += pad2 + "const int64_t " + loops[i]->name + " = " + expr(*loops[i]->min) + " + ekb_rest;\n";
    } else {
      out_ += pad2 + "const int64_t " + loops[i]->name + " = " + expr(*loops[i]->min) + " + ekb_rest % " + ext + ";\n";
      out_ += pad2 + "ekb_rest /= " + ext + ";\n";
    }
  }
  stmt(*s, indent + 2);
  out_ += pad + "}\n";
}

std::string CLikeEmitter::thread_rank() const {
  const lir::KernelGeometry& g = launch_->geometry;
  std::string rank = "(int64_t)" + thread_index(0);
  if (g.block[1] > 1 || g.block[2] > 1) rank += " + " + std::to_string(g.block[0]) + " * (int64_t)" + thread_index(1);
  if (g.block[2] > 1) rank += " + " + std::to_string(g.block[0] * g.block[1]) + " * (int64_t)" + thread_index(2);
  return rank;
}

std::string CLikeEmitter::thread_rank_operand() const {
  // Parenthesized where it is a sum, so that it is one operand wherever it stands.
  const std::string rank = thread_rank();
  return rank.find(' ') == std::string::npos ? rank : "(" + rank + ")";
}

void CLikeEmitter::thread_loop(const Stmt& s, int indent) {
  if (s.extent->kind != ExprKind::IntImm)
    throw std::logic_error("emitter: loop '" + s.name + "' bound to threads has no constant extent");
  const std::string pad(static_cast<size_t>(indent), ' ');
  out_ += pad + "{\n";
  out_ += pad + "  const int64_t " + s.name + " = " + expr(*s.min) + " + (int64_t)" + thread_index(s.gpu_axis) + ";\n";
  if (s.extent->int_value >= launch_->geometry.block[s.gpu_axis]) {
    stmt(*s.body, indent + 2);
  } else {
    // A smaller loop than the block along this axis: the extra threads skip it.
    out_ += pad + "  if ((int64_t)" + thread_index(s.gpu_axis) + " < " + std::to_string(s.extent->int_value) + ") {\n";
    stmt(*s.body, indent + 4);
    out_ += pad + "  }\n";
  }
  out_ += pad + "}\n";
}

std::string CLikeEmitter::combine_statement(const Stmt::Combine& c, const std::string& other) {
  lir::ExprP combined = lir::binary(c.op, lir::var(c.var, c.type), lir::var(other, c.type));
  return c.var + " = " + expr(*combined) + ";";
}

void CLikeEmitter::all_reduce(const Stmt& s, int indent) {
  const std::string pad(static_cast<size_t>(indent), ' ');
  const int64_t width = launch_->geometry.block[s.gpu_axis];
  out_ += pad + "{ /* cooperative reduction over " + std::string(1, "xyz"[s.gpu_axis]) + ": " + std::to_string(width) +
          " threads */\n";
  switch (s.form) {
    case lir::AllReduceForm::Shuffles:
      combine_by_shuffles(s.combines, indent);
      break;
    case lir::AllReduceForm::ShufflesOrTree:
      out_ += "#if " + warp_exchange_condition() + "\n";
      combine_by_shuffles(s.combines, indent);
      out_ += "#else\n";
      combine_by_tree(s.combines, s.gpu_axis, indent);
      out_ += "#endif\n";
      break;
    case lir::AllReduceForm::Tree:
      combine_by_tree(s.combines, s.gpu_axis, indent);
      break;
  }
  out_ += pad + "}\n";
}

void CLikeEmitter::combine_by_shuffles(const std::vector<Stmt::Combine>& combines, int indent) {
  // Butterfly within each warp (every lane ends with the warp's total), one slot per warp, then
  // every warp combines its row's warp totals the same way over all 32 lanes (lanes past the
  // warp count hold the identity): all threads hold the row's total. A butterfly over only the
  // first `warps` lanes would leave the total in those lanes and the identity in the others.
  const lir::KernelGeometry& g = launch_->geometry;
  const std::string pad2(static_cast<size_t>(indent) + 2, ' ');
  const int64_t width = g.block[0];
  auto butterfly = [&](int64_t lanes) {
    for (int64_t m = lanes / 2; m >= 1; m /= 2)
      for (const Stmt::Combine& c : combines) {
        const std::string other = "ekb_lane_" + c.var;
        out_ += pad2 + "{ const " + value_type(c.type) + " " + other + " = " +
                warp_exchange(c.var, c.type, static_cast<int>(m)) + "; " + combine_statement(c, other) + " }\n";
      }
  };
  butterfly(32);
  const int64_t warps = width / 32;
  if (warps <= 1) return;
  const std::string barrier = pad2 + barrier_statement() + "\n";
  const std::string rank = "(" + thread_rank() + ")";
  const std::string lane = "((int64_t)" + thread_index(0) + " % 32)";
  const std::string row_first = "(" + rank + " / " + std::to_string(width) + " * " + std::to_string(warps) + ")";
  for (const Stmt::Combine& c : combines)
    out_ += pad2 + "if (" + lane + " == 0) " + c.slots + "[" + rank + " / 32] = " + c.var + ";\n";
  out_ += barrier;
  for (const Stmt::Combine& c : combines)
    out_ += pad2 + c.var + " = " + lane + " < " + std::to_string(warps) + " ? " + c.slots + "[" + row_first + " + " +
            lane + "] : " + expr(*lir::combine_identity(c.op, c.type)) + ";\n";
  butterfly(32);
  out_ += barrier;  // the slots are free again (a reduction in a later iteration reuses them)
}

void CLikeEmitter::combine_by_tree(const std::vector<Stmt::Combine>& combines, int axis, int indent) {
  // A tree in shared memory: at each step the lower half of the threads still taking part adds
  // the upper half's values, then all read the total from the first thread along the axis.
  const lir::KernelGeometry& g = launch_->geometry;
  const std::string pad2(static_cast<size_t>(indent) + 2, ' ');
  const std::string barrier = pad2 + barrier_statement() + "\n";
  const int64_t width = g.block[axis];
  int64_t stride = 1;  // between neighbours along the axis, in ranks
  for (int d = 0; d < axis; ++d) stride *= g.block[d];
  const std::string rank = "(" + thread_rank() + ")";
  const std::string t = "(int64_t)" + thread_index(axis);
  for (const Stmt::Combine& c : combines) out_ += pad2 + c.slots + "[" + rank + "] = " + c.var + ";\n";
  out_ += barrier;
  int64_t half = 1;
  while (half * 2 < width) half *= 2;
  for (int64_t h = half; h >= 1; h /= 2) {
    const int64_t active = std::min(h, width - h);  // threads t < active combine with t + h
    out_ += pad2 + "if (" + t + " < " + std::to_string(active) + ") {\n";
    for (const Stmt::Combine& c : combines) {
      const std::string mine = c.slots + "[" + rank + "]";
      const std::string theirs = c.slots + "[" + rank + " + " + std::to_string(h * stride) + "]";
      lir::ExprP combined = lir::binary(c.op, lir::var("ekb_mine", c.type), lir::var("ekb_theirs", c.type));
      out_ += pad2 + "  { const " + value_type(c.type) + " ekb_mine = " + mine + ", ekb_theirs = " + theirs + "; " +
              mine + " = " + expr(*combined) + "; }\n";
    }
    out_ += pad2 + "}\n" + barrier;
  }
  for (const Stmt::Combine& c : combines)
    out_ += pad2 + c.var + " = " + c.slots + "[" + rank + " - " + t + " * " + std::to_string(stride) + "];\n";
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

void CLikeEmitter::cooperative_nest(const Stmt& nest, int indent) {
  std::vector<const Stmt*> loops;
  const Stmt* s = &nest;
  for (; s->kind == StmtKind::For && s->for_kind == lir::ForKind::GpuCooperative; s = s->body.get()) loops.push_back(s);
  const lir::Stmt::CooperativeCopy& copy = nest.cooperative;
  if (copy.name.empty()) throw std::logic_error("emitter: a cooperative copy not planned (run vectorize_cooperative_copies)");
  const std::string& p = copy.name;
  const int64_t lanes = copy.lanes;  // the innermost loop's elements per turn
  const std::string pad(static_cast<size_t>(indent), ' '), pad2 = pad + "  ", pad4 = pad2 + "  ";
  out_ += pad + "{ /* cooperative copy" + (lanes == 4 ? ", 4 floats per load" : "") + ": the block's " +
          std::to_string(launch_->geometry.threads()) + " threads take turns */\n";
  std::string count;
  for (size_t i = 0; i < loops.size(); ++i) {
    const std::string ext = p + "_extent" + std::to_string(i);
    std::string e = expr(*loops[i]->extent);
    if (lanes > 1 && i + 1 == loops.size()) e = std::to_string(loops[i]->extent->int_value / lanes);  // groups
    out_ += pad2 + "const int64_t " + ext + " = " + e + " > 0 ? " + e + " : 0;\n";
    count += (count.empty() ? "" : " * ") + ext;
  }
  // The block's threads take consecutive elements (groups), the innermost loop fastest.
  open_cooperative_turns(p, thread_rank(), count, constant_count(loops, lanes), pad2);
  out_ += pad4 + "int64_t " + p + "_rest = " + p + "_flat;\n";
  for (size_t i = loops.size(); i-- > 0;) {
    const std::string ext = p + "_extent" + std::to_string(i);
    const bool grouped = lanes > 1 && i + 1 == loops.size();
    const std::string step = grouped ? std::to_string(lanes) + " * " : "";
    if (i == 0) {
      out_ += pad4 + "const int64_t " + loops[i]->name + " = " + expr(*loops[i]->min) + " + " + step + p + "_rest;\n";
    } else {
      const std::string rest = p + "_rest % " + ext;
      out_ += pad4 + "const int64_t " + loops[i]->name + " = " + expr(*loops[i]->min) + " + " + step +
              (lanes > 1 ? "(" + rest + ")" : rest) + ";\n";
      out_ += pad4 + p + "_rest /= " + ext + ";\n";
    }
  }
  if (lanes == 1) {
    stmt(*s, indent + 4);
  } else {
    // vectorize_cooperative_copies checked the shape: dst[...] = src[...] of f32 into shared memory.
    const Expr& load = *s->value;
    const std::string value = p + "_v";
    out_ += pad4 + "const float4 " + value + " = " + float4_at(load.name, expr(*load.args[0]), false, false) + ";\n";
    if (copy.vector_store) {
      out_ += pad4 + float4_at(s->name, expr(*s->indices[0]), true, true) + " = " + value + ";\n";
    } else {
      const char* lane_names[] = {"x", "y", "z", "w"};
      for (size_t lane = 0; lane < copy.lane_indices.size(); ++lane)
        out_ += pad4 + s->name + "[" + expr(*copy.lane_indices[lane]) + "] = " + value + "." + lane_names[lane] + ";\n";
    }
  }
  out_ += pad2 + "}\n" + pad + "}\n";
}

void CLikeEmitter::open_cooperative_turns(const std::string& p, const std::string& rank, const std::string& count,
                                          std::optional<int64_t> constant_count, const std::string& pad) {
  const int64_t threads = launch_->geometry.threads();
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

}  // namespace ekb::codegen
