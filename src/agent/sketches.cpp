#include "agent/sketches.h"

#include <fmt/core.h>

#include <algorithm>

namespace ekb::agent {

namespace {

std::vector<LoopFacts> loops_of(const StageFacts& s, bool reduction) {
  std::vector<LoopFacts> out;
  for (const auto& l : s.loops)
    if (l.reduction == reduction) out.push_back(l);
  return out;
}

// The names of `loops`.
std::vector<std::string> names_of(const std::vector<LoopFacts>& loops) {
  std::vector<std::string> out;
  for (const auto& l : loops) out.push_back(l.name);
  return out;
}

// `loops` (adjacent, outermost first) of `stage` fused into one loop named by joining theirs with
// '_'; the fuse directives appended to `d` (none for a single loop). Returns that name.
std::string fuse_loops(const std::string& stage, const std::vector<std::string>& loops, std::vector<std::string>* d) {
  std::string fused = loops.front();
  for (size_t l = 1; l < loops.size(); ++l) {
    d->push_back(fmt::format("fuse({}, {}, {}, {}_{})", stage, fused, loops[l], fused, loops[l]));
    fused += "_" + loops[l];
  }
  return fused;
}

// The most a `local` buffer holds in the sketches: what stays in registers or the L1's nearest lines.
constexpr int64_t kLocalBytes = 2048;

// Whether a loop of `extent` iterations can be split by `factor` (an unknown extent: assume so).
bool fits(int64_t extent, int factor) { return factor > 0 && (extent == 0 || extent >= factor); }

// `values` with those that divide `extent` first, each part in its order.
std::vector<int> divisors_first(std::vector<int> values, int64_t extent) {
  std::stable_partition(values.begin(), values.end(), [&](int v) { return extent > 0 && extent % v == 0; });
  return values;
}

bool is_stage(const std::vector<StageFacts>& stages, const std::string& name) {
  return std::any_of(stages.begin(), stages.end(), [&](const StageFacts& s) { return s.name == name; });
}

// A gene's value; 0 for a gene the sketch does not have.
int gene(const GeneValues& v, const char* name) {
  auto it = v.find(name);
  return it == v.end() ? 0 : it->second;
}

// Text of a block: `KIND TARGET {` and the directives, or empty without any.
std::string block(const std::string& kind, const std::string& target, const std::vector<std::string>& directives) {
  if (directives.empty()) return {};
  std::string out = kind + " " + target + " {\n";
  for (const auto& d : directives) out += "  " + d + "\n";
  return out + "}\n";
}

// The loop to run on threads among `pure` (at least two loops, the last one the vector loop): the
// outermost with more than one iteration, so that a batch of one does not leave the threads idle.
std::string parallel_loop(const std::vector<LoopFacts>& pure) {
  for (size_t l = 0; l + 1 < pure.size(); ++l)
    if (pure[l].extent != 1) return pure[l].name;
  return pure[0].name;
}

bool uses(const TensorRead& r, const std::string& name) {
  return std::find(r.names_used.begin(), r.names_used.end(), name) != r.names_used.end();
}

// Whether `s` multiplies, inside its reductions, the two sides of a GEMM or a convolution: an
// operand indexed by its last pure loop j but not by the one before, i (B, a conv's weights), and an
// operand indexed by i but not by j (A, a conv's image). Its outputs then take an i x j register
// tile. With one pure loop (a GEMV), an operand indexed by j and one that is not.
bool two_sided(const StageFacts& s) {
  const auto pure = loops_of(s, false);
  if (pure.empty() || loops_of(s, true).empty()) return false;
  const std::string& j = pure.back().name;
  const std::string i = pure.size() >= 2 ? pure[pure.size() - 2].name : "";
  bool j_side = false, i_side = false;
  for (const auto& r : s.accesses) {
    if (!r.in_reduction) continue;
    const bool has_j = uses(r, j), has_i = !i.empty() && uses(r, i);
    j_side = j_side || (has_j && !has_i);
    i_side = i_side || (!has_j && (i.empty() || has_i));
  }
  return j_side && i_side;
}

// A GEMV's form (y[n] = sum(k: x[k] * w[k, n])): one pure loop, along which an operand read in the
// reduction is contiguous (its last index adds it), so that the rows of w are read contiguously
// along n. A FIR (y[n] = sum(k: h[k] * x[n + k])) reads its signal so too; a decimating one
// (x[m * D + k]) does not.
bool column_reduction(const StageFacts& s) {
  const auto pure = loops_of(s, false);
  if (pure.size() != 1 || !two_sided(s)) return false;
  return std::any_of(s.accesses.begin(), s.accesses.end(), [&](const TensorRead& r) {
    if (!r.in_reduction || r.index_steps.empty()) return false;
    const auto& last = r.index_steps.back();
    return std::find(last.begin(), last.end(), pure[0].name) != last.end();
  });
}

}  // namespace

std::string_view pattern_class_name(PatternClass c) {
  switch (c) {
    case PatternClass::Elementwise: return "elementwise";
    case PatternClass::Stencil: return "stencil";
    case PatternClass::Contraction: return "contraction";
    case PatternClass::Reduction: return "reduction";
  }
  return "elementwise";
}

PatternClass classify(const std::vector<StageFacts>& stages) {
  const StageFacts* out = nullptr;
  bool any_reduction = false;
  for (const auto& s : stages) {
    if (s.output) out = &s;
    for (const auto& l : s.loops) any_reduction = any_reduction || l.reduction;
  }
  if (!any_reduction || !out) return any_reduction ? PatternClass::Reduction : PatternClass::Elementwise;
  const auto reductions = loops_of(*out, true);
  const bool small_window = std::all_of(reductions.begin(), reductions.end(), [](const LoopFacts& l) {
    return l.extent > 0 && l.extent <= kStencilExtent;
  });
  bool others_reduce = false;
  for (const auto& s : stages)
    if (&s != out && !loops_of(s, true).empty()) others_reduce = true;
  const size_t pure = loops_of(*out, false).size();
  // A convolution of few input channels reduces over a small window too, but it is a contraction:
  // its weights are indexed by the output channel, which takes the register tile.
  if (!reductions.empty() && pure >= 2 && (!small_window || two_sided(*out))) return PatternClass::Contraction;
  if (!reductions.empty() && small_window && !others_reduce) return PatternClass::Stencil;
  if (!small_window && !others_reduce && column_reduction(*out)) return PatternClass::Contraction;
  return PatternClass::Reduction;
}

void Sketch::add(std::string name, Layer layer, std::vector<int> values) {
  genes_.push_back({std::move(name), layer, std::move(values)});
}

Sketch::Sketch(const WorkloadAnalysis& analysis) : stages_(analysis.stages) {
  gpu_ = analysis.backend != "cpu";
  class_ = classify(stages_);
  for (size_t s = 0; s < stages_.size(); ++s)
    if (stages_[s].output) out_ = s;
  // The input to prefetch: the first one read, by the first stage reading it without reducing.
  for (const auto& s : stages_) {
    if (!loops_of(s, true).empty() && !s.output) continue;
    for (const auto& r : s.reads)
      if (!is_stage(stages_, r)) {
        input_ = r;
        prefetch_stage_ = s.name;
        break;
      }
    if (!input_.empty()) break;
  }
  if (gpu_) {
    const StageFacts& o = stages_[out_];
    const auto pure = loops_of(o, false), red = loops_of(o, true);
    // Temps reducing over a row, each once, are computed at the output's rows: legal where every
    // stage reading them is the output or another such temp (computed there too).
    bool temps_reduce = false, temps_reduce_once = true;
    auto reduces = [&](const StageFacts& st) { return &st != &o && !loops_of(st, true).empty(); };
    // What the output reads, directly or through such temps.
    std::vector<std::string> read_from_rows = o.reads;
    for (size_t s = stages_.size(); s-- > 0;)
      if (reduces(stages_[s]) && std::count(read_from_rows.begin(), read_from_rows.end(), stages_[s].name))
        read_from_rows.insert(read_from_rows.end(), stages_[s].reads.begin(), stages_[s].reads.end());
    for (const auto& st : stages_)
      if (reduces(st)) {
        temps_reduce = true;
        bool read_at_rows = std::count(read_from_rows.begin(), read_from_rows.end(), st.name) > 0;
        for (const auto& other : stages_)
          if (&other != &o && !reduces(other) && std::count(other.reads.begin(), other.reads.end(), st.name)) read_at_rows = false;
        temps_reduce_once = temps_reduce_once && loops_of(st, true).size() == 1 && read_at_rows;
      }
    if (class_ == PatternClass::Contraction && pure.size() >= 2) gpu_form_ = GpuForm::Tiled;
    else if (red.size() == 1 && !pure.empty() && !temps_reduce) gpu_form_ = GpuForm::RowReduction;
    else if (red.empty() && pure.size() >= 2 && temps_reduce && temps_reduce_once) gpu_form_ = GpuForm::RowTemps;
    switch (gpu_form_) {
      case GpuForm::Tiled:
        // Starts as the classic 16x16 tile, one output per thread (legal at every shape); the
        // register tiles and shared staging come from the search.
        add("block_i", Layer::Schedule, {16, 32, 64, 128});
        add("block_j", Layer::Schedule, {16, 32, 64, 128});
        add("thread_i", Layer::Schedule, {1, 2, 4, 8});
        add("thread_j", Layer::Schedule, {1, 2, 4, 8});
        add("tile_k", Layer::Schedule, {16, 8, 4, 32});
        add("shared", Layer::Memory, {0, 1});
        add("local", Layer::Memory, {0, 1});
        break;
      case GpuForm::RowReduction:
      case GpuForm::RowTemps:
        add("threads", Layer::Schedule, {128, 256, 64, 32, 512});
        if (gpu_form_ == GpuForm::RowTemps) add("shared", Layer::Memory, {0, 1});
        break;
      case GpuForm::Flat:
        add("threads", Layer::Schedule, {128, 64, 256, 32});
        add("block_y", Layer::Schedule, {1, 0});
        break;
    }
    return;
  }
  switch (class_) {
    case PatternClass::Contraction: {
      bool panels_first = false;  // start from the panel order with B packed and the tile cached
      if (loops_of(stages_[out_], false).size() >= 2) {
        const StageFacts& o = stages_[out_];
        const auto pure = loops_of(o, false), red = loops_of(o, true);
        const std::string& j = pure.back().name;
        const std::string& i = pure[pure.size() - 2].name;
        for (const auto& r : o.accesses)
          if (r.in_reduction && !is_stage(stages_, r.tensor) && packable_.empty() && !r.index_names.empty() &&
              r.index_names.back() == j && !uses(r, i)) {
            packable_ = r.tensor;
            packable_rank_ = r.index_names.size();
          }
        // A large GEMM (every extent at least 512): the hand-written schedule's structure, which the
        // (1+1) search does not reach one gene at a time (the panel order and packing are each no
        // faster alone). On the 1024^3 GEMM, 248x against the search's 190x from the plain order.
        constexpr int64_t kLarge = 512;
        panels_first = !packable_.empty() && red.size() == 1 && red[0].extent >= kLarge &&
                       pure[pure.size() - 2].extent >= kLarge && pure.back().extent >= kLarge;
        add("tile_i", Layer::Schedule, {4, 2, 6, 8});
        add("tile_j", Layer::Schedule, {64, 32, 16, 128});
        add("tile_k", Layer::Schedule, {256, 0, 64, 128});
        add("order", Layer::Schedule, panels_first ? std::vector<int>{1, 0} : std::vector<int>{0, 1});
        add("unroll", Layer::Schedule, {1, 0});
      } else {
        // A GEMV: a long strip of outputs accumulated while the rows of the matrix stream past.
        // Strips that divide the outputs first: a ragged one's tail runs scalar, 20 times slower
        // on a 16000-sample FIR.
        add("tile_j", Layer::Schedule, divisors_first({256, 1024, 64, 128}, loops_of(stages_[out_], false)[0].extent));
        add("tile_k", Layer::Schedule, {0, 4, 256});
        add("unroll", Layer::Schedule, {0, 1});
      }
      add("vector", Layer::Schedule, {16, 8});
      add("parallel", Layer::Schedule, {1, 0});
      bool temps_reduce = false;
      for (size_t s = 0; s < stages_.size(); ++s) {
        if (s == out_ || loops_of(stages_[s], true).empty()) continue;
        temps_reduce = true;
        if (loops_of(stages_[s], false).size() >= 2 && two_sided(stages_[s])) outer_product_.push_back(stages_[s].name);
      }
      if (temps_reduce) add("rfactor", Layer::Schedule, {1, 0});
      // The operands read across the vector loop, stored transposed so that it reads them
      // contiguously (a layout change made once at the kernel's entry).
      for (size_t s = 0; s < stages_.size(); ++s)
        if (s == out_ || std::count(outer_product_.begin(), outer_product_.end(), stages_[s].name))
          for (const auto& t : transposes(stages_[s]))
            if (std::find(transposes_.begin(), transposes_.end(), t) == transposes_.end()) transposes_.push_back(t);
      if (!transposes_.empty()) add("transpose", Layer::Memory, {1, 0});
      if (!packable_.empty()) add("pack", Layer::Memory, panels_first ? std::vector<int>{1, 0} : std::vector<int>{0, 1});
      add("cache_tile", Layer::Memory, panels_first ? std::vector<int>{1, 0} : std::vector<int>{0, 1});
      add("nontemporal", Layer::Memory, {0, 1});
      break;
    }
    case PatternClass::Reduction:
      add("vector", Layer::Schedule, {16, 8, 4, 0});
      add("parallel", Layer::Schedule, {1, 0});
      add("compute_at", Layer::Schedule, {1, 0});
      add("rfactor", Layer::Schedule, {0, 1});
      add("unroll", Layer::Schedule, {1, 2, 4});
      add("nontemporal", Layer::Memory, {0, 1});
      add("prefetch", Layer::Memory, {0, 1024, 4096, 256});
      break;
    case PatternClass::Stencil:
      add("unroll_taps", Layer::Schedule, {1, 0});
      find_stencil_operands();
      // Both start on: a depthwise conv's hand schedule gained 10% from the cached weights and
      // 35% more from the row prefetch (examples/schedules-cpu/nn.dwconv3x3).
      if (!weights_.empty()) add("cache_weights", Layer::Memory, {1, 0});
      [[fallthrough]];
    case PatternClass::Elementwise:
      add("vector", Layer::Schedule, {16, 8, 4, 0});
      add("parallel", Layer::Schedule, {1, 0});
      add("unroll", Layer::Schedule, {1, 2, 4});
      add("nontemporal", Layer::Memory, {0, 1});
      if (row_prefetch_) add("prefetch_row", Layer::Memory, {16, 0, 4, 64});
      else add("prefetch", Layer::Memory, {0, 1024, 4096, 256});
      break;
  }
}

void Sketch::find_stencil_operands() {
  const StageFacts& o = stages_[out_];
  const auto pure = loops_of(o, false), red = loops_of(o, true);
  if (pure.size() < 2) return;
  row_loop_ = parallel_loop(pure);
  size_t row = 0;
  while (pure[row].name != row_loop_) ++row;
  // The column loop: the one after the rows, unless it is the vector loop.
  const std::string column = row + 2 < pure.size() ? pure[row + 1].name : "";
  for (const auto& r : o.accesses) {
    if (!r.in_reduction || is_stage(stages_, r.tensor)) continue;
    bool per_output = false;
    for (size_t l = 0; l + 1 < pure.size(); ++l) per_output = per_output || uses(r, pure[l].name);
    int64_t bytes = r.element_bytes;
    for (int64_t e : r.shape) bytes *= e;
    if (!per_output) {
      if (weights_.empty() && bytes > 0 && bytes <= kLocalBytes) weights_ = r.tensor;
      continue;
    }
    if (column.empty() || row_prefetch_ || bytes <= 0) continue;
    // The dimensions indexed by the row loop with a reduction (the window's height) and by the
    // column loop, and their strides in elements.
    int64_t window_rows = 0, row_stride = 0, column_stride = 0;
    for (size_t d = 0; d < r.index_uses.size() && d < r.shape.size(); ++d) {
      int64_t stride = 1;
      for (size_t e = d + 1; e < r.shape.size(); ++e) stride *= r.shape[e];
      const auto& names = r.index_uses[d];
      auto used = [&](const std::string& n) { return std::find(names.begin(), names.end(), n) != names.end(); };
      if (used(row_loop_))
        for (const auto& k : red)
          if (used(k.name)) window_rows = k.extent, row_stride = stride;
      if (used(column)) column_stride = stride;
    }
    if (window_rows < 2 || column_stride == 0) continue;
    const int64_t column_bytes = column_stride * r.element_bytes;
    // Four columns' worth of lines per column step, at most 8: what the hand schedule measured best.
    const int lines = static_cast<int>(std::clamp<int64_t>(4 * column_bytes / 64, 1, 8));
    row_prefetch_ = RowPrefetch{column, r.tensor, (window_rows - 1) * row_stride, column_stride, lines};
  }
}

std::vector<std::string> Sketch::transposes(const StageFacts& s) const {
  std::vector<std::string> out;
  const auto pure = loops_of(s, false);
  if (pure.empty()) return out;
  const std::string& j = pure.back().name;
  for (const auto& r : s.accesses) {
    if (!r.in_reduction || is_stage(stages_, r.tensor) || r.index_names.empty() || r.index_names.back() == j) continue;
    const auto at = std::find(r.index_names.begin(), r.index_names.end(), j);
    if (at == r.index_names.end() || std::count(r.names_used.begin(), r.names_used.end(), j) != 1) continue;
    // order(): the dimensions outermost first, j's moved last.
    std::string order;
    const size_t dj = static_cast<size_t>(at - r.index_names.begin());
    for (size_t d = 0; d < r.index_names.size(); ++d)
      if (d != dj) order += std::to_string(d) + ", ";
    out.push_back(fmt::format("layout({}, order({}{}))", r.tensor, order, dj));
  }
  return out;
}

GeneValues Sketch::initial() const {
  GeneValues v;
  for (const auto& g : genes_) v[g.name] = g.values.front();
  // The first feasible choice that changes one gene, where the first values are not.
  for (const auto& g : genes_) {
    if (feasible(v)) break;
    const int first = v[g.name];
    for (int value : g.values)
      if (v[g.name] = value; feasible(v)) break;
    if (!feasible(v)) v[g.name] = first;
  }
  return v;
}

Sketch::ContractionLoops Sketch::contraction(const GeneValues& v, std::vector<std::string>* directives) const {
  std::vector<std::string>& d = *directives;
  const StageFacts& o = stages_[out_];
  const auto get = [&](const char* name) { return gene(v, name); };
  const int vec = get("vector"), unroll = get("unroll");
  const bool parallel = get("parallel") != 0;
  const auto pure = loops_of(o, false);
  const auto red = loops_of(o, true);
  // A GEMV has no i: its tile is a strip of j.
  const bool has_i = pure.size() >= 2;
  const LoopFacts& j = pure[pure.size() - 1];
  const int ti = get("tile_i"), tj = std::max(get("tile_j"), vec), tk = get("tile_k");
  auto split = [&](const LoopFacts& l, int factor, std::string& outer, std::string& inner) {
    outer = l.name;
    inner.clear();
    if (factor > 0 && fits(l.extent, factor) && l.extent != factor) {
      outer = l.name + "_o";
      inner = l.name + "_i";
      d.push_back(fmt::format("split({}, {}, {}, {}, {})", o.name, l.name, factor, outer, inner));
    }
  };
  std::string io, ii, jo, ji, ko, ki;
  if (has_i) split(pure[pure.size() - 2], ti, io, ii);
  split(j, tj, jo, ji);
  std::vector<std::string> k_loops;
  if (red.size() == 1) {
    split(red[0], tk, ko, ki);
    k_loops = {ko};
    if (!ki.empty()) k_loops.push_back(ki);
  } else {
    for (const auto& r : red) k_loops.push_back(r.name);
  }
  std::vector<std::string> order;
  for (size_t b = 0; b + 2 < pure.size(); ++b) order.push_back(pure[b].name);
  // j unsplit (no longer than its tile) is the vector loop: innermost, as its inner loop would be.
  const bool j_split = !ji.empty();
  std::string panel_reduction;
  if (has_i && j_split && get("order") == 1 && k_loops.size() == 2) {
    order.insert(order.end(), {jo, k_loops[0], io, k_loops[1]});
    panel_reduction = k_loops[0];
  } else {
    if (has_i) order.push_back(io);
    if (j_split) order.push_back(jo);
    order.insert(order.end(), k_loops.begin(), k_loops.end());
  }
  if (!ii.empty()) order.push_back(ii);
  order.push_back(j_split ? ji : j.name);
  std::string reorder = "reorder(" + o.name;
  for (const auto& l : order) reorder += ", " + l;
  d.push_back(reorder + ")");
  if (parallel) {
    // The outermost loop with more than one iteration (a batch of one leaves the threads idle).
    std::string outer = order.front();
    for (size_t b = 0; b + 2 < pure.size() && pure[b].extent == 1; ++b) outer = order[b + 1];
    d.push_back(fmt::format("parallel({}, {})", o.name, outer));
  }
  const std::string& vloop = ji.empty() ? j.name : ji;
  const int vlen = ji.empty() ? static_cast<int>(j.extent) : tj;
  if (vec > 0 && fits(vlen, vec)) {
    d.push_back(fmt::format("vectorize({}, {}, {})", o.name, vloop, vec));
    if (unroll && vlen / vec > 1 && vlen % vec == 0) d.push_back(fmt::format("unroll({}, {}, {})", o.name, vloop, vlen / vec));
  }
  if (unroll && !ii.empty()) d.push_back(fmt::format("unroll({}, {}, {})", o.name, ii, ti));
  return {order, k_loops.back(), panel_reduction};
}

std::string Sketch::schedule(const GeneValues& v) const { return gpu_ ? schedule_gpu(v) : schedule_cpu(v); }

namespace {

// The factor a GPU tile of `factor` iterations takes on a loop of `extent`: the whole loop when it
// is no longer (one block along it), else the factor.
int64_t gpu_factor(int64_t extent, int factor) { return extent > 0 && extent <= factor ? extent : factor; }

}  // namespace

bool Sketch::feasible(const GeneValues& v) const {
  if (!gpu_) return true;
  const auto pure = loops_of(stages_[out_], false);
  if (gpu_form_ == GpuForm::Flat) {
    // The loops outside the innermost on block.y: at most 65535 blocks along y.
    int64_t outer = 1;
    for (size_t l = 0; l + 1 < pure.size(); ++l) outer *= std::max<int64_t>(pure[l].extent, 1);
    return !gene(v, "block_y") || pure.size() < 2 || outer <= 65535;
  }
  if (gpu_form_ != GpuForm::Tiled) return true;
  const LoopFacts& i = pure[pure.size() - 2];
  const LoopFacts& j = pure[pure.size() - 1];
  const int64_t bi = gpu_factor(i.extent, gene(v, "block_i")), bj = gpu_factor(j.extent, gene(v, "block_j"));
  const int ti = gene(v, "thread_i"), tj = gene(v, "thread_j");
  if (bi % ti != 0 || bj % tj != 0) return false;
  const int64_t threads = (bi / ti) * (bj / tj);
  return threads >= 1 && threads <= 1024;
}

Sketch::GpuTileLoops Sketch::gpu_tile(const GeneValues& v, std::vector<std::string>* directives) const {
  std::vector<std::string>& d = *directives;
  const StageFacts& o = stages_[out_];
  const auto pure = loops_of(o, false), red = loops_of(o, true);
  const LoopFacts& i = pure[pure.size() - 2];
  const LoopFacts& j = pure[pure.size() - 1];
  // Each loop split into blocks, threads and a register tile; the names stay the same whatever the
  // factors (a factor of 1 still splits), so that the memory layer can name them.
  // One output per thread keeps the reduction innermost, in its statement; then an edge tile can
  // shift inwards (recomputing some of the previous tile) rather than be guarded, so that every
  // thread of a block reaches the barriers of shared staging. A register tile moves the reduction
  // out of its statement, where a recomputed iteration would accumulate twice: guarded.
  const bool register_tile = gene(v, "thread_i") * gene(v, "thread_j") > 1;
  auto split = [&](const std::string& loop, int64_t extent, int64_t factor, const std::string& outer, const std::string& inner) {
    const bool ragged = extent > 0 && extent % factor != 0;
    d.push_back(fmt::format("split({}, {}, {}, {}, {}{})", o.name, loop, factor, outer, inner,
                            ragged && !register_tile ? ", tail=shift_inwards" : ""));
  };
  // The loops outside the tile (a batch, a conv's output rows) fused into one grid axis first: a
  // ragged split peels a tail that would run them outside each other.
  std::vector<std::string> batch;
  for (size_t l = 0; l + 2 < pure.size(); ++l) batch.push_back(pure[l].name);
  const std::string batch_loop = batch.empty() ? "" : fuse_loops(o.name, batch, &d);
  const int64_t bi = gpu_factor(i.extent, gene(v, "block_i")), bj = gpu_factor(j.extent, gene(v, "block_j"));
  split(i.name, i.extent, bi, i.name + "_b", i.name + "_in");
  split(j.name, j.extent, bj, j.name + "_b", j.name + "_in");
  split(i.name + "_in", bi, gene(v, "thread_i"), i.name + "_t", i.name + "_r");
  split(j.name + "_in", bj, gene(v, "thread_j"), j.name + "_t", j.name + "_r");
  std::vector<std::string> order, unrolled;
  if (!batch_loop.empty()) order.push_back(batch_loop);
  order.insert(order.end(), {i.name + "_b", j.name + "_b", i.name + "_t", j.name + "_t"});
  if (!register_tile) order.insert(order.end(), {i.name + "_r", j.name + "_r"});
  std::string stage_k;
  if (red.size() == 1) {
    const LoopFacts& k = red[0];
    const int64_t tk = gpu_factor(k.extent, gene(v, "tile_k"));
    split(k.name, k.extent, tk, k.name + "_o", k.name + "_i");
    stage_k = k.name + "_o";
    order.insert(order.end(), {stage_k, k.name + "_i"});
    unrolled.push_back(fmt::format("unroll({}, {}_i, {})", o.name, k.name, tk));
  } else {
    stage_k = red[0].name;
    for (const auto& r : red) order.push_back(r.name);
  }
  if (register_tile) order.insert(order.end(), {i.name + "_r", j.name + "_r"});
  std::string reorder = "reorder(" + o.name;
  for (const auto& l : order) reorder += ", " + l;
  d.push_back(reorder + ")");
  if (!batch_loop.empty()) d.push_back(fmt::format("bind({}, {}, block.z)", o.name, batch_loop));
  d.push_back(fmt::format("bind({}, {}_b, block.y)", o.name, i.name));
  d.push_back(fmt::format("bind({}, {}_b, block.x)", o.name, j.name));
  d.push_back(fmt::format("bind({}, {}_t, thread.y)", o.name, i.name));
  d.push_back(fmt::format("bind({}, {}_t, thread.x)", o.name, j.name));
  d.insert(d.end(), unrolled.begin(), unrolled.end());
  if (const int ti = gene(v, "thread_i"); ti > 1) d.push_back(fmt::format("unroll({}, {}_r, {})", o.name, i.name, ti));
  if (const int tj = gene(v, "thread_j"); tj > 1) d.push_back(fmt::format("unroll({}, {}_r, {})", o.name, j.name, tj));
  return {j.name + "_t", stage_k};
}

namespace {

// `rows`, a stage's outermost loops, fused into one loop bound to block.x; returns its name.
std::string bind_rows(const std::string& stage, const std::vector<LoopFacts>& rows, std::vector<std::string>* d) {
  const std::string row = fuse_loops(stage, names_of(rows), d);
  d->push_back(fmt::format("bind({}, {}, block.x)", stage, row));
  return row;
}

// A loop spread over `threads` threads of the block, each taking a strided part: split, the thread
// loop put outside the serial one (after `outer`, the loops that stay outside) and bound to thread.x.
void spread_over_threads(const std::string& stage, const LoopFacts& loop, int threads, const std::vector<std::string>& outer,
                         std::vector<std::string>* d) {
  if (!fits(loop.extent, threads) || loop.extent == threads) {
    d->push_back(fmt::format("bind({}, {}, thread.x)", stage, loop.name));
    return;
  }
  d->push_back(fmt::format("split({}, {}, {}, {}_o, {}_t)", stage, loop.name, threads, loop.name, loop.name));
  std::string reorder = "reorder(" + stage;
  for (const auto& l : outer) reorder += ", " + l;
  d->push_back(fmt::format("{}, {}_t, {}_o)", reorder, loop.name, loop.name));
  d->push_back(fmt::format("bind({}, {}_t, thread.x)", stage, loop.name));
}

// A loop of `extent` iterations spread over blocks of `threads` threads, or bound to the threads of
// one block when it has no more iterations than that.
void spread_over_blocks(const std::string& stage, const std::string& loop, int64_t extent, int threads,
                        std::vector<std::string>* d) {
  if (fits(extent, threads) && extent != threads) {
    d->push_back(fmt::format("split({}, {}, {}, {}_o, {}_i)", stage, loop, threads, loop, loop));
    d->push_back(fmt::format("bind({}, {}_o, block.x)", stage, loop));
    d->push_back(fmt::format("bind({}, {}_i, thread.x)", stage, loop));
  } else {
    d->push_back(fmt::format("bind({}, {}, thread.x)", stage, loop));
  }
}

}  // namespace

std::string Sketch::schedule_gpu(const GeneValues& v) const {
  const StageFacts& o = stages_[out_];
  const auto pure = loops_of(o, false);
  if (pure.empty()) return {};
  std::vector<std::string> d;
  const int threads = gene(v, "threads");
  switch (gpu_form_) {
    case GpuForm::Tiled:
      gpu_tile(v, &d);
      return block("schedule", "gpu", d);
    case GpuForm::RowReduction: {
      // One block per output element, its single reduction loop shared by the block's threads (a
      // cooperative reduction).
      spread_over_threads(o.name, loops_of(o, true)[0], threads, names_of(pure), &d);
      bind_rows(o.name, pure, &d);
      return block("schedule", "gpu", d);
    }
    case GpuForm::RowTemps: {
      // One block per row: the temps' reductions over the row computed there cooperatively, then
      // each thread writes a strided part of the row.
      const std::vector<LoopFacts> rows(pure.begin(), pure.end() - 1);
      spread_over_threads(o.name, pure.back(), threads, names_of(rows), &d);
      const std::string row = bind_rows(o.name, rows, &d);
      for (size_t s = stages_.size(); s-- > 0;) {
        const auto red = loops_of(stages_[s], true);
        if (s == out_ || red.empty()) continue;
        d.push_back(fmt::format("compute_at({}, {}, {})", stages_[s].name, o.name, row));
        spread_over_threads(stages_[s].name, red[0], threads, {}, &d);
      }
      return block("schedule", "gpu", d);
    }
    case GpuForm::Flat:
      break;
  }
  if (!gene(v, "block_y") && pure.size() >= 2) {
    // Every pure loop fused into one, spread over blocks of `threads`.
    const std::string flat = fuse_loops(o.name, names_of(pure), &d);
    int64_t extent = 1;
    for (const auto& l : pure) extent = l.extent > 0 && extent > 0 ? extent * l.extent : 0;
    spread_over_blocks(o.name, flat, extent, threads, &d);
    return block("schedule", "gpu", d);
  }
  // The loops outside the innermost fused into one block.y loop (before the split: a split's
  // tail would run the innermost loop outside them), so that the block loops are outermost.
  const std::vector<LoopFacts> outer_loops(pure.begin(), pure.end() - 1);
  const std::string outer = outer_loops.empty() ? "" : fuse_loops(o.name, names_of(outer_loops), &d);
  spread_over_blocks(o.name, pure.back().name, pure.back().extent, threads, &d);
  if (!outer.empty()) d.push_back(fmt::format("bind({}, {}, block.y)", o.name, outer));
  return block("schedule", "gpu", d);
}

std::string Sketch::memory_gpu(const GeneValues& v) const {
  const StageFacts& o = stages_[out_];
  std::vector<std::string> d;
  if (gpu_form_ == GpuForm::Tiled) {
    std::vector<std::string> ignored;
    const GpuTileLoops loops = gpu_tile(v, &ignored);
    if (gene(v, "shared"))
      for (const auto& r : o.reduction_reads)
        if (!is_stage(stages_, r)) d.push_back(fmt::format("cache_read({}, {}, {}, shared, {}_s)", r, o.name, loops.stage_k, r));
    if (gene(v, "local")) d.push_back(fmt::format("cache_write({}, {}, local, {}_l)", o.name, loops.thread_j, o.name));
  } else if (gpu_form_ == GpuForm::RowTemps && gene(v, "shared") && !input_.empty() &&
             std::find(o.reads.begin(), o.reads.end(), input_) != o.reads.end()) {
    // The row read by the temps' reductions and again by the output, copied into shared memory once.
    const auto pure = loops_of(o, false);
    std::vector<std::string> ignored;  // the schedule's fuse directives: only the row's name is needed
    const std::string row = fuse_loops(o.name, names_of({pure.begin(), pure.end() - 1}), &ignored);
    d.push_back(fmt::format("cache_read({}, {}, {}, shared, {}_s)", input_, o.name, row, input_));
  }
  return block("memory", "gpu", d);
}

std::string Sketch::schedule_cpu(const GeneValues& v) const {
  std::vector<std::string> d;
  const StageFacts& o = stages_[out_];
  const auto get = [&](const char* name) { return gene(v, name); };
  const int vec = get("vector"), unroll = get("unroll");
  const bool parallel = get("parallel") != 0;

  if (class_ == PatternClass::Contraction) contraction(v, &d);

  const auto o_pure = loops_of(o, false);
  // Reductions: every temp computed where the output's outermost loop needs it, consumers first.
  if (class_ == PatternClass::Reduction && get("compute_at") && !o_pure.empty())
    for (size_t s = stages_.size(); s-- > 0;)
      if (s != out_ && !stages_[s].output) d.push_back(fmt::format("compute_at({}, {}, {})", stages_[s].name, o.name, o_pure[0].name));

  for (const auto& s : stages_) {
    const auto pure = loops_of(s, false);
    const auto red = loops_of(s, true);
    const bool is_out = &s == &o;
    if (is_out && class_ == PatternClass::Contraction) continue;
    if (std::count(outer_product_.begin(), outer_product_.end(), s.name)) {
      // A temp that is a contraction too: a sum of outer products, the reductions outside its
      // last pure loop, which is the vector loop.
      std::string reorder = "reorder(" + s.name;
      for (size_t l = 0; l + 1 < pure.size(); ++l) reorder += ", " + pure[l].name;
      for (const auto& r : red) reorder += ", " + r.name;
      d.push_back(reorder + ", " + pure.back().name + ")");
      if (parallel) d.push_back(fmt::format("parallel({}, {})", s.name, parallel_loop(pure)));
      if (vec > 0 && fits(pure.back().extent, vec)) d.push_back(fmt::format("vectorize({}, {}, {})", s.name, pure.back().name, vec));
      continue;
    }
    if (!red.empty() && !is_out) {
      // A reduction into a temp: in vector partials through rfactor when asked.
      if (get("rfactor") && vec > 0 && red.size() == 1 && red[0].extent >= 4 * vec) {
        const std::string r = red[0].name, f = s.name + "_f";
        d.push_back(fmt::format("split({}, {}, {}, {}_o, {}_i, tail=peel)", s.name, r, vec, r, r));
        d.push_back(fmt::format("rfactor({}, {}_i, {})", s.name, r, f));
        std::string reorder = "reorder(" + f;
        for (const auto& l : pure) reorder += ", " + l.name;
        d.push_back(reorder + ", " + r + "_o, " + f + ")");
        d.push_back(fmt::format("vectorize({}, {}, {})", f, f, vec));
      }
      continue;
    }
    if (pure.empty()) continue;
    // Temps of a reduction pattern computed at the output's rows are vectorized only.
    const bool placed = class_ == PatternClass::Reduction && get("compute_at") && !is_out;
    std::string last = pure.back().name;
    int64_t last_extent = pure.back().extent;
    if (parallel && !placed) {
      if (pure.size() >= 2) {
        d.push_back(fmt::format("parallel({}, {})", s.name, parallel_loop(pure)));
      } else if (is_out && pure[0].extent >= 4096) {
        d.push_back(fmt::format("split({}, {}, 1024, {}_o, {}_i)", s.name, last, last, last));
        d.push_back(fmt::format("parallel({}, {}_o)", s.name, last));
        last += "_i";
        last_extent = 1024;
      }
    }
    if (vec > 0 && fits(last_extent, vec)) {
      d.push_back(fmt::format("vectorize({}, {}, {})", s.name, last, vec));
      if (unroll > 1 && fits(last_extent, vec * unroll)) d.push_back(fmt::format("unroll({}, {}, {})", s.name, last, unroll));
    }
    if (is_out && class_ == PatternClass::Stencil && get("unroll_taps"))
      for (const auto& r : red)
        if (r.extent > 1 && r.extent <= 8) d.push_back(fmt::format("unroll({}, {}, {})", s.name, r.name, r.extent));
  }
  return block("schedule", "cpu", d);
}

std::string Sketch::memory(const GeneValues& v) const {
  if (gpu_) return memory_gpu(v);
  const auto get = [&](const char* name) { return gene(v, name); };
  const StageFacts& o = stages_[out_];
  std::vector<std::string> d, cache_schedule;
  if (get("cache_weights") && !weights_.empty())
    d.push_back(fmt::format("cache_read({}, {}, {}, local, {}_l)", weights_, o.name, row_loop_, weights_));
  if (get("nontemporal")) d.push_back(fmt::format("nontemporal({})", o.name));
  if (get("transpose")) d.insert(d.end(), transposes_.begin(), transposes_.end());
  if (const int ahead = get("prefetch_row"); ahead > 0 && row_prefetch_) {
    const RowPrefetch& p = *row_prefetch_;
    d.push_back(fmt::format("prefetch({}, {}, {}, {}, lines={})", o.name, p.column_loop, p.tensor,
                            p.last_row_offset + ahead * p.column_stride, p.lines));
  }
  if (const int distance = get("prefetch"); distance > 0 && !input_.empty()) {
    for (const auto& s : stages_)
      if (s.name == prefetch_stage_) {
        const auto pure = loops_of(s, false);
        if (!pure.empty()) d.push_back(fmt::format("prefetch({}, {}, {}, {})", s.name, pure.back().name, input_, distance));
      }
  }
  // The schedule's loop order, which both caches below are placed by.
  std::optional<ContractionLoops> loops;
  if (class_ == PatternClass::Contraction && (get("cache_tile") || get("pack"))) {
    std::vector<std::string> ignored;
    loops = contraction(v, &ignored);
  }
  if (class_ == PatternClass::Contraction && get("cache_tile")) {
    // The output tile accumulated in a local buffer under the loop just outside the innermost
    // reduction loop: the schedule's loop order decides which that is.
    const auto pure = loops_of(o, false);
    const auto& order = loops->order;
    const std::string& inner_k = loops->inner_reduction;
    auto k = std::find(order.begin(), order.end(), inner_k);
    if (k != order.end() && k != order.begin()) {
      const std::string buffer = o.name + "_l";
      // A register tile fits `local`; a GEMV's long strip goes to `tile`.
      const int64_t elements = int64_t{std::max(get("tile_i"), 1)} * std::max(get("tile_j"), 1);
      d.push_back(fmt::format("cache_write({}, {}, {}, {})", o.name, *(k - 1), elements * 4 <= kLocalBytes ? "local" : "tile", buffer));
      const int vec = get("vector");
      const std::string c_last = fmt::format("c{}", pure.size() - 1);
      if (vec > 0) cache_schedule.push_back(fmt::format("vectorize({}, {}, {})", buffer, c_last, vec));
    }
  }
  if (class_ == PatternClass::Contraction && get("pack") && !packable_.empty()) {
    // The j-side operand's block of the panel copied into a contiguous buffer once per panel and
    // reduction block (the hand-written GEMM's packing of B), its rows read with unit stride.
    if (!loops->panel_reduction.empty()) {
      const std::string buffer = packable_ + "_p";
      d.push_back(fmt::format("cache_read({}, {}, {}, tile, {})", packable_, o.name, loops->panel_reduction, buffer));
      if (const int vec = get("vector"); vec > 0)
        cache_schedule.push_back(fmt::format("vectorize({}, c{}, {})", buffer, packable_rank_ - 1, vec));
    }
  }
  return block("memory", "cpu", d) + (cache_schedule.empty() ? "" : "\n" + block("schedule", "cpu", cache_schedule));
}

}  // namespace ekb::agent
