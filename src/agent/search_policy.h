// The `search` policy (docs/AGENT.md, "The search policy"): no model. Per workload it takes the
// sketch of the pattern's class (sketches.h), proposes it, then runs a (1+1) evolutionary search
// over the sketch's genes: each proposal is the best candidate so far with one or two genes of one
// layer changed (more once those are all tried), its fitness the loop's measurement (a proposal is
// kept when it is faster); a gene value that alone made the best much slower is not chosen again.
// It is deterministic for a seed: the same seed and the same outcomes give the same proposals.
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <utility>

#include "agent/policy.h"
#include "agent/sketches.h"

namespace ekb::agent {

class SearchPolicy : public Policy {
 public:
  explicit SearchPolicy(uint64_t seed = 0) : seed_(seed) {}
  std::string name() const override { return "search"; }
  Proposal propose(const AgentState& state) override;

 private:
  void start(const WorkloadAnalysis& analysis);
  // What became of the last proposal: a kept one becomes the best.
  void learn(const AgentState& state);
  // The best values with one or two genes of `layer` changed to a choice not tried yet, or with
  // more of them changed where no near choice is left.
  std::optional<GeneValues> mutate(Layer layer);
  std::string text(Layer layer, const GeneValues& v) const;
  bool has_genes(Layer layer) const;

  uint64_t seed_;
  std::mt19937_64 rng_;
  std::string workload_;
  std::unique_ptr<Sketch> sketch_;
  GeneValues best_;            // the genes behind the best program (valid once schedule_kept_)
  bool schedule_kept_ = false;
  bool memory_sketch_tried_ = false;  // the sketch's own memory layer, proposed once after its schedule
  std::string memory_text_;    // the best program's memory layer, as this policy wrote it
  std::optional<GeneValues> pending_;
  Layer pending_layer_ = Layer::Schedule;
  int pending_step_ = -1;
  std::set<std::string> tried_;  // layer:text of every proposal
  // Gene values that, changed alone from the best, failed or lost more than a fifth of its speed:
  // later mutations avoid them (a dwconv's search spent half its budget on points without threads).
  std::set<std::pair<std::string, int>> bad_;
  std::optional<std::pair<std::string, int>> pending_single_change_;
};

}  // namespace ekb::agent
