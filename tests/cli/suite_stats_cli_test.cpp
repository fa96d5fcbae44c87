// `ekb suite stats` end to end: its counts on a suite known by construction (stats_fixture.h),
// the table and JSON forms, filters, errors, and agreement with `ekb list` on the real suite.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "run_ekb.h"
#include "suite/stats_fixture.h"

namespace {

using ekb::testing_cli::run_ekb;

bool contains(const std::string& s, const std::string& what) { return s.find(what) != std::string::npos; }

TEST(CliSuiteStats, JsonCountsOnAKnownSuite) {
  std::string dir = ekb::testing_stats::write_stats_fixture();
  auto r = run_ekb("--suite " + dir + " suite stats --json");
  ASSERT_EQ(r.code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["patterns"], 3);
  EXPECT_EQ(j["workloads"], 6);
  EXPECT_EQ(j["heldout"], 2);
  EXPECT_EQ(j["patterns_with_heldout"], 2);
  EXPECT_EQ(j["patterns_without_new_heldout_shape"], nlohmann::json({"graph.t_c", "nn.t_a"}));
  EXPECT_EQ(j["by_domain"]["nn"], nlohmann::json({{"patterns", 1}, {"workloads", 3}, {"heldout", 1}}));
  EXPECT_EQ(j["by_level"]["fused"]["workloads"], 2);
  EXPECT_EQ(j["by_dtype"]["f32"]["patterns"], 2);
  EXPECT_EQ(j["by_size"]["micro"]["workloads"], 3);
}

TEST(CliSuiteStats, TableAndFilters) {
  std::string dir = ekb::testing_stats::write_stats_fixture();
  auto r = run_ekb("--suite " + dir + " suite stats");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "3 patterns, 6 workloads (2 held-out)")) << r.out;
  EXPECT_TRUE(contains(r.out, "1 of 3 patterns have a held-out workload")) << r.out;
  EXPECT_TRUE(contains(r.out, "without one: graph.t_c, nn.t_a")) << r.out;
  for (const char* title : {"by domain", "by level", "by dtype", "by size"}) EXPECT_TRUE(contains(r.out, title)) << title;
  auto micro = run_ekb("--suite " + dir + " suite stats --json --size micro");
  ASSERT_EQ(micro.code, 0) << micro.err;
  auto j = nlohmann::json::parse(micro.out);
  EXPECT_EQ(j["workloads"], 3);   // a1, b1, b2
  EXPECT_EQ(j["patterns"], 2);
  EXPECT_EQ(run_ekb("--suite " + dir + " suite stats --domain nope").code, 2);  // a usage error
  EXPECT_NE(run_ekb("suite").code, 0);  // the group needs a subcommand
}

TEST(CliSuiteStats, AgreesWithListOnTheRealSuite) {
  auto stats = run_ekb("suite stats --json");
  auto list = run_ekb("list --json");
  ASSERT_EQ(stats.code, 0) << stats.err;
  ASSERT_EQ(list.code, 0) << list.err;
  auto s = nlohmann::json::parse(stats.out);
  auto l = nlohmann::json::parse(list.out);
  EXPECT_EQ(s["workloads"].get<size_t>(), l.size());
  std::map<std::string, int> per_domain;
  int heldout = 0;
  for (const auto& w : l) ++per_domain[w["domain"].get<std::string>()], heldout += w["heldout"].get<bool>();
  EXPECT_EQ(s["heldout"].get<int>(), heldout);
  for (const auto& [domain, n] : per_domain) EXPECT_EQ(s["by_domain"][domain]["workloads"].get<int>(), n) << domain;
}

}  // namespace
