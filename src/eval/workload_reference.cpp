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
}

WorkloadReference::WorkloadReference(const ir::Instance& inst, uint64_t base_seed, const ReferenceCache* cache)
    : inst_(inst), base_seed_(base_seed), cache_(cache), interface_(kernel_interface(inst)) {}

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

std::unique_ptr<Trial> WorkloadReference::make_trial(uint64_t seed, bool edge) const {
  auto t = std::make_unique<Trial>();
  t->seed = seed;
  t->edge = edge;
  std::vector<ir::TensorData> inputs;
  if (edge) {
    bool changed = false;
    inputs = generate_edge_inputs(inst_, seed, &changed);
    if (!changed) return nullptr;
    t->label = "edge values (seed " + std::to_string(seed) + ")";
  } else {
    inputs = ir::generate_inputs(inst_, seed);
    t->label = "random inputs (seed " + std::to_string(seed) + ")";
  }
  std::optional<StoredReference> ref;
  const std::string key = cache_ ? ReferenceCache::key(inst_, seed, edge) : std::string();
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
  auto t = make_trial(base_seed_ + static_cast<uint64_t>(k), false);
  std::lock_guard lock(mutex_);
  auto [it, inserted] = random_.emplace(k, std::move(t));
  return *it->second;
}

const Trial* WorkloadReference::edge_trial() {
  {
    std::lock_guard lock(mutex_);
    if (edge_done_) return edge_.get();
  }
  auto t = make_trial(base_seed_ + kEdgeSeedOffset, true);
  if (t && !t->reference_error.empty()) t.reset();  // bounds the reference cannot take: no trial
  std::lock_guard lock(mutex_);
  if (!edge_done_) {
    edge_ = std::move(t);
    edge_done_ = true;
  }
  return edge_.get();
}

void WorkloadReference::prepare(int n, bool edge) {
  std::vector<std::future<void>> jobs;
  for (int k = 0; k < n; ++k)
    jobs.push_back(std::async(std::launch::async, [this, k] { random_trial(k); }));
  if (edge) jobs.push_back(std::async(std::launch::async, [this] { edge_trial(); }));
  for (auto& j : jobs) j.get();
}

}  // namespace ekb::eval
