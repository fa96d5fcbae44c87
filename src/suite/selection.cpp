#include "suite/selection.h"

#include <fnmatch.h>

#include <algorithm>
#include <stdexcept>

#include "ir/diagnostics.h"

namespace ekb::suite {

namespace {

bool in_list_or_empty(const std::vector<std::string>& list, const std::string& v) {
  return list.empty() || std::find(list.begin(), list.end(), v) != list.end();
}

void check_list(const char* option, const std::vector<std::string>& given,
                const std::vector<std::string>& valid) {
  for (const auto& v : given) {
    if (std::find(valid.begin(), valid.end(), v) != valid.end()) continue;
    std::string hint = ir::did_you_mean(v, valid);
    std::string all;
    for (const auto& x : valid) all += (all.empty() ? "" : ", ") + x;
    throw std::invalid_argument(std::string("unknown value '") + v + "' for " + option +
                                "\n  hint: " + (hint.empty() ? "valid values: " + all : hint));
  }
}

}  // namespace

bool Selection::matches(const WorkloadEntry& w) const {
  const ir::Pattern& p = w.pattern->module.pattern;
  if (!include_heldout && w.workload->has_tag("heldout")) return false;
  if (!in_list_or_empty(domains, p.domain())) return false;
  if (!in_list_or_empty(levels, std::string(ir::level_name(p.level)))) return false;
  if (!in_list_or_empty(dtypes, workload_dtype(w))) return false;
  if (!in_list_or_empty(sizes, workload_size_class(w))) return false;
  if (names.empty()) return true;
  std::string full = w.full_name();
  for (const auto& g : names)
    if (fnmatch(g.c_str(), full.c_str(), 0) == 0 || fnmatch(g.c_str(), p.name.c_str(), 0) == 0)
      return true;
  return false;
}

std::vector<WorkloadEntry> Selection::apply(const Suite& s) const {
  std::vector<WorkloadEntry> out;
  for (const auto& w : s.workloads())
    if (matches(w)) out.push_back(w);
  return out;
}

void Selection::check_values() const {
  check_list("--domain", domains, ir::pattern_domains());
  check_list("--level", levels, {"operator", "fused", "graph"});
  check_list("--dtype", dtypes, {"bool", "i8", "u8", "i16", "i32", "i64", "f16", "bf16", "f32", "f64"});
  check_list("--size", sizes, {"micro", "mobile"});
}

}  // namespace ekb::suite
