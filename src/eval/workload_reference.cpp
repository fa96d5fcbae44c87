#include "eval/workload_reference.h"

#include <cmath>
#include <future>
#include <optional>
#include <stdexcept>

#include "eval/edge_inputs.h"
#include "eval/output_check.h"
#include "ir/inputs.h"
#include "ir/interpreter.h"

namespace ekb::eval {

namespace {
constexpr uint64_t kEdgeSeedOffset = 1'000'003;
constexpr uint64_t kBranchSeedOffset = 2'000'003;
}  // namespace

WorkloadReference::WorkloadReference(const ir::Instance& inst, uint64_t base_seed, const ReferenceCache* cache)
    : inst_(inst),
      base_seed_(base_seed),
      cache_(cache),
      interface_(kernel_interface(inst)),
      branch_plans_(plan_branch_trials(inst)) {}

namespace {

StoredReference compute_reference(const ir::Instance& inst, const std::vector<ir::TensorData>& inputs) {
  StoredReference ref;
  try {
    ref.expected = ir::run_reference(inst, inputs);
  } catch (const std::exception& e) {
    ref.reference_error = e.what();
    return ref;
  }
  for (const ir::TensorData& out : ref.expected) ref.rms.push_back(finite_rms(out));
  return ref;
}

}  // namespace

std::unique_ptr<Trial> WorkloadReference::make_trial(uint64_t seed, const std::string& kind, std::string label,
                                                     const std::vector<ir::TensorData>& inputs) const {
  auto t = std::make_unique<Trial>();
  t->seed = seed;
  t->kind = kind;
  t->label = std::move(label);
  std::optional<StoredReference> ref;
  const std::string key = cache_ ? ReferenceCache::key(inst_, seed, kind) : std::string();
  if (cache_) ref = cache_->load(key, inst_);
  if (!ref) {
    ref = compute_reference(inst_, inputs);
    if (cache_) cache_->store(key, *ref);
  }
  t->expected = std::move(ref->expected);
  t->rms = std::move(ref->rms);
  t->reference_error = std::move(ref->reference_error);
  if (!t->reference_error.empty()) return t;
  for (const ir::TensorData& in : inputs) t->inputs.push_back(ir::to_bytes(in));
  return t;
}

const Trial& WorkloadReference::random_trial(int k) {
  {
    std::lock_guard lock(mutex_);
    auto it = random_.find(k);
    if (it != random_.end()) return *it->second;
  }
  const uint64_t seed = base_seed_ + static_cast<uint64_t>(k);
  auto t = make_trial(seed, "random", "random inputs (seed " + std::to_string(seed) + ")", ir::generate_inputs(inst_, seed));
  std::lock_guard lock(mutex_);
  auto [it, inserted] = random_.emplace(k, std::move(t));
  return *it->second;
}

const Trial* WorkloadReference::edge_trial() {
  {
    std::lock_guard lock(mutex_);
    if (edge_done_) return edge_.get();
  }
  const uint64_t seed = base_seed_ + kEdgeSeedOffset;
  bool changed = false;
  std::vector<ir::TensorData> inputs = generate_edge_inputs(inst_, seed, &changed);
  std::unique_ptr<Trial> t;
  if (changed) t = make_trial(seed, "edge", "edge values (seed " + std::to_string(seed) + ")", inputs);
  if (t && !t->reference_error.empty()) t.reset();  // bounds the reference cannot take: no trial
  std::lock_guard lock(mutex_);
  if (!edge_done_) {
    edge_ = std::move(t);
    edge_done_ = true;
  }
  return edge_.get();
}

const Trial* WorkloadReference::branch_trial(int k) {
  {
    std::lock_guard lock(mutex_);
    auto it = branch_.find(k);
    if (it != branch_.end()) return it->second.get();
  }
  const BranchTrialPlan& plan = branch_plans_.at(static_cast<size_t>(k));
  const uint64_t seed = base_seed_ + kBranchSeedOffset + static_cast<uint64_t>(k);
  auto t = make_trial(seed, plan.label, plan.label + " (seed " + std::to_string(seed) + ")",
                      generate_branch_inputs(inst_, plan, seed));
  if (!t->reference_error.empty()) t.reset();  // inputs the reference cannot take: no trial
  std::lock_guard lock(mutex_);
  auto [it, inserted] = branch_.emplace(k, std::move(t));
  return it->second.get();
}

void WorkloadReference::prepare(int n, bool edge, bool branch) {
  std::vector<std::future<void>> jobs;
  for (int k = 0; k < n; ++k)
    jobs.push_back(std::async(std::launch::async, [this, k] { random_trial(k); }));
  if (edge) jobs.push_back(std::async(std::launch::async, [this] { edge_trial(); }));
  if (branch)
    for (int k = 0; k < branch_trial_count(); ++k)
      jobs.push_back(std::async(std::launch::async, [this, k] { branch_trial(k); }));
  for (auto& j : jobs) j.get();
}

}  // namespace ekb::eval
