#include "suite/stats.h"

#include <algorithm>
#include <set>

namespace ekb::suite {

std::string workload_shape_key(const ir::Workload& w) {
  std::map<std::string, int64_t> ints;  // sorted by name: binding order does not matter
  for (const auto& b : w.bindings)
    if (!b.is_type) ints[b.name] = b.int_value;
  std::string key;
  for (const auto& [name, value] : ints) key += name + "=" + std::to_string(value) + ",";
  return key;
}

bool has_new_heldout_shape(const PatternEntry& p) {
  std::set<std::string> public_shapes;
  for (const auto& w : p.module.workloads)
    if (!w.has_tag("heldout")) public_shapes.insert(workload_shape_key(w));
  for (const auto& w : p.module.workloads)
    if (w.has_tag("heldout") && !public_shapes.count(workload_shape_key(w))) return true;
  return false;
}

SuiteStats compute_stats(const std::vector<WorkloadEntry>& workloads) {
  SuiteStats s;
  // Patterns seen per category, so that each counts once there.
  std::map<std::string, std::set<const PatternEntry*>> seen_domain, seen_level, seen_dtype, seen_size;
  std::set<const PatternEntry*> patterns, with_heldout;
  auto count = [](std::map<std::string, StatCounts>& table, std::map<std::string, std::set<const PatternEntry*>>& seen,
                  const std::string& key, const WorkloadEntry& w, bool heldout) {
    StatCounts& c = table[key];
    ++c.workloads;
    c.heldout += heldout;
    if (seen[key].insert(w.pattern).second) ++c.patterns;
  };
  for (const auto& w : workloads) {
    const ir::Pattern& p = w.pattern->module.pattern;
    bool heldout = w.workload->has_tag("heldout");
    ++s.total.workloads;
    s.total.heldout += heldout;
    patterns.insert(w.pattern);
    if (heldout) with_heldout.insert(w.pattern);
    count(s.by_domain, seen_domain, p.domain(), w, heldout);
    count(s.by_level, seen_level, std::string(ir::level_name(p.level)), w, heldout);
    count(s.by_dtype, seen_dtype, workload_dtype(w), w, heldout);
    std::string size = workload_size_class(w);
    count(s.by_size, seen_size, size.empty() ? "unsized" : size, w, heldout);
  }
  s.total.patterns = static_cast<int>(patterns.size());
  s.patterns_with_heldout = static_cast<int>(with_heldout.size());
  for (const PatternEntry* p : patterns)
    if (!has_new_heldout_shape(*p)) s.without_new_heldout_shape.push_back(p->name());
  std::sort(s.without_new_heldout_shape.begin(), s.without_new_heldout_shape.end());
  return s;
}

std::vector<WorkloadEntry> stratified_subset(const std::vector<WorkloadEntry>& workloads, size_t stride) {
  std::map<std::string, size_t> seen;  // workloads of each stratum so far
  std::vector<WorkloadEntry> subset;
  for (const auto& w : workloads) {
    const ir::Pattern& p = w.pattern->module.pattern;
    std::string stratum = p.domain() + "/" + std::string(ir::level_name(p.level));
    if (seen[stratum]++ % stride == 0) subset.push_back(w);
  }
  return subset;
}

}  // namespace ekb::suite
