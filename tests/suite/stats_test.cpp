// suite::compute_stats, has_new_heldout_shape and stratified_subset on a suite whose counts are
// known by construction (stats_fixture.h), and their consistency on the real suite.
#include <gtest/gtest.h>

#include "stats_fixture.h"
#include "suite/stats.h"

namespace ekb::suite {
namespace {

void expect_counts(const std::map<std::string, StatCounts>& table, const std::string& key, int patterns,
                   int workloads, int heldout) {
  auto it = table.find(key);
  ASSERT_NE(it, table.end()) << key;
  EXPECT_EQ(it->second.patterns, patterns) << key;
  EXPECT_EQ(it->second.workloads, workloads) << key;
  EXPECT_EQ(it->second.heldout, heldout) << key;
}

TEST(SuiteStats, CountsByEveryClassification) {
  Suite s = Suite::load(testing_stats::write_stats_fixture());
  SuiteStats st = compute_stats(s.workloads());
  EXPECT_EQ(st.total.patterns, 3);
  EXPECT_EQ(st.total.workloads, 6);
  EXPECT_EQ(st.total.heldout, 2);
  EXPECT_EQ(st.patterns_with_heldout, 2);
  EXPECT_EQ(st.by_domain.size(), 3u);
  expect_counts(st.by_domain, "nn", 1, 3, 1);
  expect_counts(st.by_domain, "qnn", 1, 2, 1);
  expect_counts(st.by_domain, "graph", 1, 1, 0);
  expect_counts(st.by_level, "operator", 1, 3, 1);
  expect_counts(st.by_level, "fused", 1, 2, 1);
  expect_counts(st.by_level, "graph", 1, 1, 0);
  // A pattern counts once per dtype and size class it has workloads in.
  expect_counts(st.by_dtype, "f32", 2, 3, 0);
  expect_counts(st.by_dtype, "f16", 1, 1, 1);
  expect_counts(st.by_dtype, "i8", 1, 2, 1);
  expect_counts(st.by_size, "micro", 2, 3, 1);
  expect_counts(st.by_size, "mobile", 2, 3, 1);
  // nn.t_a's held-out workload only changes the dtype; graph.t_c has none.
  EXPECT_EQ(st.without_new_heldout_shape, (std::vector<std::string>{"graph.t_c", "nn.t_a"}));
}

TEST(SuiteStats, HeldOutShapeIgnoresTypeBindingsAndOrder) {
  Suite s = Suite::load(testing_stats::write_stats_fixture());
  EXPECT_FALSE(has_new_heldout_shape(*s.find_pattern("nn.t_a")));
  EXPECT_TRUE(has_new_heldout_shape(*s.find_pattern("qnn.t_b")));
  EXPECT_FALSE(has_new_heldout_shape(*s.find_pattern("graph.t_c")));
  const auto& a = s.find_pattern("nn.t_a")->module.workloads;
  EXPECT_EQ(workload_shape_key(a[1]), workload_shape_key(a[2]));  // N = 8 as f32 and as f16
  EXPECT_NE(workload_shape_key(a[0]), workload_shape_key(a[1]));
}

TEST(SuiteStats, StratifiedSubsetKeepsEveryDomainAndLevel) {
  Suite s = Suite::load(testing_stats::write_stats_fixture());
  std::vector<std::string> names;
  for (const auto& w : stratified_subset(s.workloads(), 2)) names.push_back(w.full_name());
  // Strata in suite order: graph/graph {c1}, nn/operator {a1, a2, a3}, qnn/fused {b1, b2}.
  EXPECT_EQ(names, (std::vector<std::string>{"graph.t_c/c1", "nn.t_a/a1", "nn.t_a/a3", "qnn.t_b/b1"}));
}

TEST(SuiteStats, RealSuiteTablesAddUp) {
  Suite s = Suite::load();
  SuiteStats st = compute_stats(s.workloads());
  EXPECT_EQ(st.total.patterns, static_cast<int>(s.patterns().size()));
  EXPECT_EQ(st.total.workloads, static_cast<int>(s.workloads().size()));
  for (const auto* table : {&st.by_domain, &st.by_level, &st.by_dtype, &st.by_size}) {
    int workloads = 0, heldout = 0;
    for (const auto& [key, c] : *table) workloads += c.workloads, heldout += c.heldout;
    EXPECT_EQ(workloads, st.total.workloads);
    EXPECT_EQ(heldout, st.total.heldout);
  }
  int patterns = 0;
  for (const auto& [key, c] : st.by_domain) patterns += c.patterns;  // each pattern has one domain
  EXPECT_EQ(patterns, st.total.patterns);
  // The CI subset covers every domain and level the suite has.
  SuiteStats sub = compute_stats(stratified_subset(s.workloads(), 32));  // opencl_suite_test's stride
  EXPECT_EQ(sub.by_domain.size(), st.by_domain.size());
  for (const auto& [domain, c] : st.by_domain) EXPECT_TRUE(sub.by_domain.count(domain)) << domain;
  for (const auto& [level, c] : st.by_level) EXPECT_TRUE(sub.by_level.count(level)) << level;
}

}  // namespace
}  // namespace ekb::suite
