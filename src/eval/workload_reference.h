// What the correctness protocol compares against, per workload: trials of inputs (as the bytes a
// kernel sees) and their f64 reference outputs. Computing a reference can take the interpreter
// seconds on a large workload, so the caller keeps one WorkloadReference per workload and reuses it
// for the baseline and every candidate; trials are computed on first use (in parallel by prepare()).
//
// Trial seeds are base_seed + k for random trial k (k = 0, 1, ...): distinct, and the same for every
// candidate. Besides them: one edge-value trial (edge_inputs.h) and the trials derived from the
// compute layer (branch_trials.h), which the evaluator uses only where the baseline passes them. The evaluator uses trials 0..n-1 for the correctness check and timing, and later ones
// for the re-check after timing ("inputs never used before" by that candidate).
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "eval/branch_trials.h"
#include "eval/kernel_interface.h"
#include "eval/reference_cache.h"
#include "ir/instance.h"
#include "ir/tensor_data.h"

namespace ekb::eval {

// One byte buffer per tensor, in ABI order.
using InputBuffers = std::vector<std::vector<uint8_t>>;

struct Trial {
  std::string label;                          // "random inputs (seed 7)", "edge values (seed ...)"
  uint64_t seed = 0;
  std::string kind;                           // "random", "edge", or a branch trial's label (the cache key's)
  InputBuffers inputs;                        // each input's buffer, ABI order
  std::vector<ir::TensorData> expected;       // each output's reference values, ABI order
  std::vector<double> rms;                    // root mean square of each expected output (finite values)
  std::string reference_error;                // non-empty: the reference failed on these inputs
};

inline constexpr uint64_t kDefaultBaseSeed = 0x5EED;

class WorkloadReference {
 public:
  // `inst` (and `cache`, when given) must outlive this object. With a cache, reference outputs
  // are read from it when present and stored in it when computed.
  explicit WorkloadReference(const ir::Instance& inst, uint64_t base_seed = kDefaultBaseSeed,
                             const ReferenceCache* cache = nullptr);
  WorkloadReference(const WorkloadReference&) = delete;
  WorkloadReference& operator=(const WorkloadReference&) = delete;

  const ir::Instance& instance() const { return inst_; }
  const KernelInterface& interface() const { return interface_; }

  // Random trial k, computed on first use. Thread-safe; the reference stays valid.
  const Trial& random_trial(int k);
  // The edge-value trial (edge_inputs.h); nullptr when no input has distinct domain ends or the
  // reference fails on them.
  const Trial* edge_trial();
  // The trials derived from the compute layer (branch_trials.h): branch_trial(k) for k in
  // [0, branch_trial_count()), computed on first use; nullptr where the reference fails on them.
  int branch_trial_count() const { return static_cast<int>(branch_plans_.size()); }
  const Trial* branch_trial(int k);
  // Computes random trials [0, n), the edge trial and the branch trials (if asked) concurrently.
  void prepare(int n, bool edge, bool branch = false);

 private:
  std::unique_ptr<Trial> make_trial(uint64_t seed, const std::string& kind, std::string label,
                                    const std::vector<ir::TensorData>& inputs) const;

  const ir::Instance& inst_;
  const uint64_t base_seed_;
  const ReferenceCache* cache_;
  const KernelInterface interface_;
  std::mutex mutex_;
  std::map<int, std::unique_ptr<Trial>> random_;
  std::unique_ptr<Trial> edge_;
  bool edge_done_ = false;
  const std::vector<BranchTrialPlan> branch_plans_;
  std::map<int, std::unique_ptr<Trial>> branch_;  // null: the reference fails on that trial
};

}  // namespace ekb::eval
