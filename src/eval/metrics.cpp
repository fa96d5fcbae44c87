#include "eval/metrics.h"

#include <algorithm>
#include <cmath>
#include <fmt/core.h>
#include <set>
#include <stdexcept>
#include <unordered_map>

namespace ekb::eval {

double pass_at_k(int n, int c, int k) {
  if (n < 0 || c < 0 || c > n || k < 1 || k > n)
    throw std::invalid_argument(fmt::format("pass@k needs 0 <= c <= n and 1 <= k <= n (n={}, c={}, k={})", n, c, k));
  // Every draw of k from n includes a correct one when fewer than k are incorrect.
  if (n - c < k) return 1.0;
  // C(n-c, k) / C(n, k) = prod_{i=n-c+1}^{n} (1 - k / i)  (Chen et al.'s numerically stable form).
  double none_correct = 1.0;
  for (int i = n - c + 1; i <= n; ++i) none_correct *= 1.0 - static_cast<double>(k) / i;
  return 1.0 - none_correct;
}

std::string threshold_key(double p) { return fmt::format("{:.1f}", p); }

bool is_fast(const CandidateResult& r, double p) { return r.correct && r.speedup && *r.speedup > p; }

int WorkloadSamples::correct() const {
  return static_cast<int>(std::count_if(samples.begin(), samples.end(), [](auto* r) { return r->correct; }));
}

int WorkloadSamples::fast(double p) const {
  return static_cast<int>(std::count_if(samples.begin(), samples.end(), [p](auto* r) { return is_fast(*r, p); }));
}

std::vector<WorkloadSamples> group_by_workload(const std::vector<CandidateResult>& results,
                                               const std::vector<std::string>& selected) {
  std::vector<WorkloadSamples> groups;
  std::unordered_map<std::string, size_t> index;
  auto group_of = [&](const std::string& w) -> WorkloadSamples& {
    auto [it, added] = index.emplace(w, groups.size());
    if (added) groups.push_back({w, {}});
    return groups[it->second];
  };
  for (const auto& w : selected) group_of(w);
  for (const auto& r : results) group_of(r.workload).samples.push_back(&r);
  return groups;
}

namespace {

// Mean over workloads of pass_at_k with successes counted by `successes`; see correct_at_k.
template <typename Successes>
std::optional<double> mean_pass_at_k(const std::vector<WorkloadSamples>& groups, int k, Successes successes) {
  if (groups.empty()) return std::nullopt;
  double sum = 0;
  for (const auto& g : groups) {
    if (g.n() == 0) continue;  // scores 0
    if (g.n() < k) return std::nullopt;
    sum += pass_at_k(g.n(), successes(g), k);
  }
  return sum / static_cast<double>(groups.size());
}

}  // namespace

std::optional<double> correct_at_k(const std::vector<WorkloadSamples>& groups, int k) {
  return mean_pass_at_k(groups, k, [](const WorkloadSamples& g) { return g.correct(); });
}

std::optional<double> fast_at_k(const std::vector<WorkloadSamples>& groups, double p, int k) {
  return mean_pass_at_k(groups, k, [p](const WorkloadSamples& g) { return g.fast(p); });
}

double fast_best_of_n(const std::vector<WorkloadSamples>& groups, double p) {
  if (groups.empty()) return 0;
  auto hits = std::count_if(groups.begin(), groups.end(), [p](const auto& g) { return g.fast(p) > 0; });
  return static_cast<double>(hits) / static_cast<double>(groups.size());
}

double fast_for_sample(const std::vector<WorkloadSamples>& groups, double p, int sample) {
  if (groups.empty()) return 0;
  auto hits = std::count_if(groups.begin(), groups.end(), [&](const auto& g) {
    return std::any_of(g.samples.begin(), g.samples.end(),
                       [&](auto* r) { return r->sample == sample && is_fast(*r, p); });
  });
  return static_cast<double>(hits) / static_cast<double>(groups.size());
}

double correct_for_sample(const std::vector<WorkloadSamples>& groups, int sample) {
  if (groups.empty()) return 0;
  auto hits = std::count_if(groups.begin(), groups.end(), [&](const auto& g) {
    return std::any_of(g.samples.begin(), g.samples.end(), [&](auto* r) { return r->sample == sample && r->correct; });
  });
  return static_cast<double>(hits) / static_cast<double>(groups.size());
}

std::optional<double> geomean_speedup(const std::vector<WorkloadSamples>& groups) {
  double log_sum = 0;
  int workloads = 0;
  for (const auto& g : groups) {
    double workload_log_sum = 0;
    int correct = 0;
    for (const auto* r : g.samples) {
      if (!r->correct || !r->speedup || !(*r->speedup > 0)) continue;
      workload_log_sum += std::log(*r->speedup);
      ++correct;
    }
    if (correct == 0) continue;
    log_sum += workload_log_sum / correct;
    ++workloads;
  }
  if (workloads == 0) return std::nullopt;
  return std::exp(log_sum / workloads);
}

std::optional<double> median(std::vector<double> values) {
  if (values.empty()) return std::nullopt;
  std::sort(values.begin(), values.end());
  size_t n = values.size();
  return n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

Summary summarize(const std::vector<WorkloadSamples>& groups) {
  Summary s;
  s.workloads = static_cast<int>(groups.size());
  bool first = true;
  std::set<int> sample_indices;
  for (const auto& g : groups) {
    for (const auto* r : g.samples) {
      ++s.n;
      s.compiled += r->compiled;
      s.correct += r->correct;
      sample_indices.insert(r->sample);
      if (r->provenance) {
        s.ledger += r->provenance->ledger;
        ++s.ledgered;
      }
    }
    if (g.n() == 0) continue;
    s.min_samples = first ? g.n() : std::min(s.min_samples, g.n());
    s.max_samples = std::max(s.max_samples, g.n());
    first = false;
  }
  // Correct@1 always (0 without workloads); larger k only where every attempted workload has k samples.
  s.correct_at_k[1] = correct_at_k(groups, 1).value_or(0);
  for (int k : kCorrectAtK)
    if (k > 1 && s.min_samples >= k)
      if (auto v = correct_at_k(groups, k)) s.correct_at_k[k] = *v;
  for (double p : kFastThresholds) {
    s.fast_at[p] = fast_at_k(groups, p, 1).value_or(0);
    s.fast_at_best_of_n[p] = fast_best_of_n(groups, p);
  }
  s.geomean_speedup = geomean_speedup(groups);
  for (int i : sample_indices) {
    SampleScores& scores = s.by_sample[i];
    scores.correct = correct_for_sample(groups, i);
    for (double p : kFastThresholds) scores.fast_at[p] = fast_for_sample(groups, p, i);
  }
  return s;
}

}  // namespace ekb::eval
