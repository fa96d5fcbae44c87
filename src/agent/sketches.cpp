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

// Whether a loop of `extent` iterations can be split by `factor` (an unknown extent: assume so).
bool fits(int64_t extent, int factor) { return factor > 0 && (extent == 0 || extent >= factor); }

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
  if (!reductions.empty() && small_window && !others_reduce) return PatternClass::Stencil;
  if (!reductions.empty() && !small_window && loops_of(*out, false).size() >= 2) return PatternClass::Contraction;
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
    add("threads", Layer::Schedule, {128, 64, 256, 32});
    add("block_y", Layer::Schedule, {1, 0});
    return;
  }
  switch (class_) {
    case PatternClass::Contraction:
      add("tile_i", Layer::Schedule, {4, 2, 6, 8});
      add("tile_j", Layer::Schedule, {64, 32, 16, 128});
      add("tile_k", Layer::Schedule, {256, 0, 64, 128});
      add("order", Layer::Schedule, {0, 1});
      add("vector", Layer::Schedule, {16, 8});
      add("unroll", Layer::Schedule, {1, 0});
      add("parallel", Layer::Schedule, {1, 0});
      add("cache_tile", Layer::Memory, {0, 1});
      add("nontemporal", Layer::Memory, {0, 1});
      break;
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
      [[fallthrough]];
    case PatternClass::Elementwise:
      add("vector", Layer::Schedule, {16, 8, 4, 0});
      add("parallel", Layer::Schedule, {1, 0});
      add("unroll", Layer::Schedule, {1, 2, 4});
      add("nontemporal", Layer::Memory, {0, 1});
      add("prefetch", Layer::Memory, {0, 1024, 4096, 256});
      break;
  }
}

GeneValues Sketch::initial() const {
  GeneValues v;
  for (const auto& g : genes_) v[g.name] = g.values.front();
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
  const LoopFacts& i = pure[pure.size() - 2];
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
  split(i, ti, io, ii);
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
  if (get("order") == 1 && k_loops.size() == 2) {
    order.insert(order.end(), {jo, k_loops[0], io, k_loops[1]});
  } else {
    order.insert(order.end(), {io, jo});
    order.insert(order.end(), k_loops.begin(), k_loops.end());
  }
  if (!ii.empty()) order.push_back(ii);
  if (!ji.empty()) order.push_back(ji);
  std::string reorder = "reorder(" + o.name;
  for (const auto& l : order) reorder += ", " + l;
  d.push_back(reorder + ")");
  if (parallel) d.push_back(fmt::format("parallel({}, {})", o.name, order.front()));
  const std::string& vloop = ji.empty() ? j.name : ji;
  const int vlen = ji.empty() ? static_cast<int>(j.extent) : tj;
  if (vec > 0 && fits(vlen, vec)) {
    d.push_back(fmt::format("vectorize({}, {}, {})", o.name, vloop, vec));
    if (unroll && vlen / vec > 1 && vlen % vec == 0) d.push_back(fmt::format("unroll({}, {}, {})", o.name, vloop, vlen / vec));
  }
  if (unroll && !ii.empty()) d.push_back(fmt::format("unroll({}, {}, {})", o.name, ii, ti));
  return {order, k_loops.back()};
}

std::string Sketch::schedule(const GeneValues& v) const { return gpu_ ? schedule_gpu(v) : schedule_cpu(v); }

std::string Sketch::schedule_gpu(const GeneValues& v) const {
  const StageFacts& o = stages_[out_];
  const auto pure = loops_of(o, false);
  if (pure.empty()) return {};
  std::vector<std::string> d;
  const LoopFacts& last = pure.back();
  const int threads = gene(v, "threads");
  if (fits(last.extent, threads) && last.extent != threads) {
    d.push_back(fmt::format("split({}, {}, {}, {}_o, {}_i)", o.name, last.name, threads, last.name, last.name));
    d.push_back(fmt::format("bind({}, {}_o, block.x)", o.name, last.name));
    d.push_back(fmt::format("bind({}, {}_i, thread.x)", o.name, last.name));
  } else {
    d.push_back(fmt::format("bind({}, {}, thread.x)", o.name, last.name));
  }
  if (pure.size() >= 2 && gene(v, "block_y")) {
    // The loops outside the innermost fused into one, so that the block loops are outermost.
    std::string outer = pure[0].name;
    for (size_t l = 1; l + 1 < pure.size(); ++l) {
      const std::string fused = outer + "_" + pure[l].name;
      d.push_back(fmt::format("fuse({}, {}, {}, {})", o.name, outer, pure[l].name, fused));
      outer = fused;
    }
    d.push_back(fmt::format("bind({}, {}, block.y)", o.name, outer));
  }
  return block("schedule", "gpu", d);
}

std::string Sketch::schedule_cpu(const GeneValues& v) const {
  std::vector<std::string> d;
  const StageFacts& o = stages_[out_];
  const auto get = [&](const char* name) { return gene(v, name); };
  const int vec = get("vector"), unroll = get("unroll");
  const bool parallel = get("parallel") != 0;

  if (class_ == PatternClass::Contraction) {
    contraction(v, &d);
    return block("schedule", "cpu", d);
  }

  const auto o_pure = loops_of(o, false);
  // Reductions: every temp computed where the output's outermost loop needs it, consumers first.
  if (class_ == PatternClass::Reduction && get("compute_at") && !o_pure.empty())
    for (size_t s = stages_.size(); s-- > 0;)
      if (s != out_ && !stages_[s].output) d.push_back(fmt::format("compute_at({}, {}, {})", stages_[s].name, o.name, o_pure[0].name));

  for (const auto& s : stages_) {
    const auto pure = loops_of(s, false);
    const auto red = loops_of(s, true);
    const bool is_out = &s == &o;
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
  if (gpu_) return {};
  const auto get = [&](const char* name) { return gene(v, name); };
  const StageFacts& o = stages_[out_];
  std::vector<std::string> d, cache_schedule;
  if (get("nontemporal")) d.push_back(fmt::format("nontemporal({})", o.name));
  if (const int distance = get("prefetch"); distance > 0 && !input_.empty()) {
    for (const auto& s : stages_)
      if (s.name == prefetch_stage_) {
        const auto pure = loops_of(s, false);
        if (!pure.empty()) d.push_back(fmt::format("prefetch({}, {}, {}, {})", s.name, pure.back().name, input_, distance));
      }
  }
  if (class_ == PatternClass::Contraction && get("cache_tile")) {
    // The output tile accumulated in a local buffer under the loop just outside the innermost
    // reduction loop: the schedule's loop order decides which that is.
    std::vector<std::string> ignored;
    const ContractionLoops loops = contraction(v, &ignored);
    const auto pure = loops_of(o, false);
    const auto& order = loops.order;
    const std::string& inner_k = loops.inner_reduction;
    auto k = std::find(order.begin(), order.end(), inner_k);
    if (k != order.end() && k != order.begin()) {
      const std::string buffer = o.name + "_l";
      d.push_back(fmt::format("cache_write({}, {}, local, {})", o.name, *(k - 1), buffer));
      const int vec = get("vector");
      const std::string c_last = fmt::format("c{}", pure.size() - 1);
      if (vec > 0) cache_schedule.push_back(fmt::format("vectorize({}, {}, {})", buffer, c_last, vec));
    }
  }
  return block("memory", "cpu", d) + (cache_schedule.empty() ? "" : "\n" + block("schedule", "cpu", cache_schedule));
}

}  // namespace ekb::agent
