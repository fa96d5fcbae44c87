#include "eval/workload_reference.h"

#include <cmath>
#include <future>
#include <stdexcept>

#include "eval/edge_inputs.h"
#include "ir/inputs.h"
#include "ir/interpreter.h"

namespace ekb::eval {

namespace {
constexpr uint64_t kEdgeSeedOffset = 1'000'003;
}

WorkloadReference::WorkloadReference(const ir::Instance& inst, uint64_t base_seed)
    : inst_(inst), base_seed_(base_seed), interface_(kernel_interface(inst)) {}

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
  try {
    t->expected = ir::run_reference(inst_, inputs);
  } catch (const std::exception& e) {
    t->reference_error = e.what();
    return t;
  }
  for (const ir::TensorData& in : inputs) t->inputs.push_back(ir::to_bytes(in));
  for (const ir::TensorData& out : t->expected) {
    double sum = 0;
    int64_t n = 0;
    for (int64_t k = 0; k < out.num_elements(); ++k) {
      double v = out.as_double(k);
      if (!std::isfinite(v)) continue;
      sum += v * v;
      ++n;
    }
    t->rms.push_back(n ? std::sqrt(sum / static_cast<double>(n)) : 0.0);
  }
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
