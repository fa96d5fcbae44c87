#include "agent/search_policy.h"

#include <fmt/core.h>

#include <algorithm>
#include <vector>

namespace ekb::agent {

namespace {

// FNV-1a: a hash that is the same on every platform, so that a seed means the same search.
uint64_t stable_hash(std::string_view s) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
  return h;
}

std::string describe(const GeneValues& v, const std::vector<Gene>& genes, Layer layer) {
  std::string out;
  for (const auto& g : genes)
    if (g.layer == layer) out += (out.empty() ? "" : " ") + g.name + "=" + std::to_string(v.at(g.name));
  return out;
}

constexpr int kMutationTries = 64;
// A single change whose speed is below this fraction of the best's marks its gene value bad.
constexpr double kBadChangeFraction = 0.8;

Proposal stop_proposal(std::string why) {
  Proposal p;
  p.stop = true;
  p.action = std::move(why);
  return p;
}

}  // namespace

void SearchPolicy::start(const WorkloadAnalysis& analysis) {
  workload_ = analysis.workload;
  rng_.seed(seed_ ^ stable_hash(analysis.workload));
  sketch_ = std::make_unique<Sketch>(analysis);
  best_ = sketch_->initial();
  schedule_kept_ = false;
  memory_sketch_tried_ = false;
  memory_text_.clear();
  pending_.reset();
  pending_step_ = -1;
  tried_.clear();
  bad_.clear();
  pending_single_change_.reset();
}

void SearchPolicy::learn(const AgentState& state) {
  if (!pending_) return;
  for (const auto& step : state.history) {
    if (step.index != pending_step_) continue;
    if (step.outcome == "kept") {
      best_ = *pending_;
      if (pending_layer_ == Layer::Schedule) schedule_kept_ = true;
      else memory_text_ = text(Layer::Memory, best_);
    } else if (pending_layer_ == Layer::Memory && memory_text_.empty() && *pending_ == best_) {
      // The sketch's own memory layer was not kept: the best program has none, so its memory
      // genes are off (a later change of one gene is then one change, not several).
      for (const auto& g : sketch_->genes())
        if (g.layer == Layer::Memory && std::count(g.values.begin(), g.values.end(), 0)) best_[g.name] = 0;
    } else if (pending_single_change_ && step.outcome != "unusable" &&
               (step.outcome != "slower" || (step.speedup && *step.speedup < kBadChangeFraction * state.best_speedup))) {
      bad_.insert(*pending_single_change_);
    }
  }
  pending_.reset();
  pending_single_change_.reset();
}

bool SearchPolicy::has_genes(Layer layer) const {
  for (const auto& g : sketch_->genes())
    if (g.layer == layer) return true;
  return false;
}

std::string SearchPolicy::text(Layer layer, const GeneValues& v) const {
  return layer == Layer::Memory ? sketch_->memory(v) : sketch_->schedule(v);
}

std::optional<GeneValues> SearchPolicy::mutate(Layer layer) {
  std::vector<const Gene*> genes;
  for (const auto& g : sketch_->genes())
    if (g.layer == layer && g.values.size() > 1) genes.push_back(&g);
  if (genes.empty()) return std::nullopt;
  // Near neighbours first (one or two genes changed). Once they are all tried, farther points (up
  // to every gene changed): a sketch of few genes ran out of near neighbours after a third of its
  // budget, and the search stopped there.
  const std::string kept = layer == Layer::Memory ? memory_text_ : text(Layer::Schedule, best_);
  for (int attempt = 0; attempt < 2 * kMutationTries; ++attempt) {
    GeneValues v = best_;
    const bool far = attempt >= kMutationTries;
    const int changes = far ? 1 + static_cast<int>(rng_() % genes.size()) : rng_() % 4 == 0 ? 2 : 1;
    for (int c = 0; c < changes; ++c) {
      const Gene& g = *genes[rng_() % genes.size()];
      std::vector<int> choices;
      for (int value : g.values)
        if (value != v[g.name] && !bad_.count({g.name, value})) choices.push_back(value);
      if (!choices.empty()) v[g.name] = choices[rng_() % choices.size()];
    }
    if (v == best_ || !sketch_->feasible(v)) continue;  // a second change undid the first, or no block fits
    // A gene the layer's text does not show (a GEMM's pack without the panel order) would measure
    // the best again: noise taken for a result.
    const std::string proposed = text(layer, v);
    if (proposed == kept) continue;
    // A schedule must keep the kept memory layer valid: its text may name the schedule's loops.
    if (layer == Layer::Schedule && !memory_text_.empty() && text(Layer::Memory, v) != memory_text_) continue;
    if (tried_.insert(std::string(layer_name(layer)) + ":" + proposed).second) return v;
  }
  return std::nullopt;
}

Proposal SearchPolicy::propose(const AgentState& state) {
  if (!state.analysis) return stop_proposal("no analysis");
  if (!sketch_ || state.analysis->workload != workload_ || state.history.size() <= 1) start(*state.analysis);
  learn(state);
  Proposal p;
  const std::string klass(pattern_class_name(sketch_->pattern_class()));
  // The sketch's own text of a layer, proposed once.
  auto sketch_layer = [&](Layer layer, const std::string& what) {
    p.layer = layer;
    p.text = text(layer, best_);
    tried_.insert(std::string(layer_name(layer)) + ":" + p.text);
    pending_ = best_;
    p.action = fmt::format("sketch {}{}: {}", klass, layer == Layer::Memory ? " memory" : "", describe(best_, sketch_->genes(), layer));
    p.rationale = fmt::format("the {} sketch's {}", klass, what);
  };
  if (!schedule_kept_ && tried_.empty()) {
    sketch_layer(Layer::Schedule, "starting point");  // the sketch itself, first
  } else if (schedule_kept_ && !memory_sketch_tried_ && memory_text_.empty() && !text(Layer::Memory, best_).empty()) {
    // Then its memory layer where it starts with directives (operands stored transposed): a
    // structural choice that changes which schedules are fast, so tried before them.
    memory_sketch_tried_ = true;
    sketch_layer(Layer::Memory, "starting memory layer");
  } else {
    // The suggested layer when it has genes; the memory layer only once a schedule is kept (its
    // directives name the schedule's loops).
    Layer layer = state.layer == Layer::Memory && schedule_kept_ && has_genes(Layer::Memory) ? Layer::Memory
                                                                                               : Layer::Schedule;
    std::optional<GeneValues> v = mutate(layer);
    if (!v && layer == Layer::Schedule && schedule_kept_ && has_genes(Layer::Memory)) v = mutate(layer = Layer::Memory);
    if (!v && layer == Layer::Memory) v = mutate(layer = Layer::Schedule);
    if (!v) return stop_proposal("every neighbour of the best was tried");
    std::string changed;
    int changes = 0;
    for (const auto& [name, value] : *v)
      if (best_.at(name) != value) {
        changed += fmt::format("{}{}={} (was {})", changed.empty() ? "" : ", ", name, value, best_.at(name));
        if (++changes == 1) pending_single_change_ = {name, value};
      }
    if (changes != 1) pending_single_change_.reset();
    p.layer = layer;
    p.text = text(layer, *v);
    pending_ = *v;
    p.action = fmt::format("{} {}", klass, changed);
    p.rationale = fmt::format("a neighbour of the best ({:.3f}x)", state.best_speedup);
  }
  pending_layer_ = p.layer;
  pending_step_ = static_cast<int>(state.history.size());
  return p;
}

}  // namespace ekb::agent
