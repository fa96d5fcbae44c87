// The disk cache of reference outputs: what a re-run reads must be exactly what the interpreter
// computed, a damaged or foreign file must never be used, and the cache must stay in its budget.
#include "eval/reference_cache.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "eval/workload_reference.h"
#include "codegen/suite_params.h"

namespace ekb::eval {
namespace {

namespace fs = std::filesystem;

class ReferenceCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = ::testing::TempDir() + "ekb-reference-cache-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name();
    fs::remove_all(root_);
  }
  void TearDown() override { fs::remove_all(root_); }

  ir::Instance bind(const std::string& name) { return codegen::testing::bound_workload(name); }
  size_t files() const {
    size_t n = 0;
    for (const auto& e : fs::directory_iterator(root_ + "/reference"))
      n += e.path().extension() == ".ref" ? 1 : 0;
    return n;
  }

  std::string root_;
};

void expect_same_trial(const Trial& a, const Trial& b) {
  ASSERT_EQ(a.expected.size(), b.expected.size());
  for (size_t o = 0; o < a.expected.size(); ++o) {
    EXPECT_EQ(a.expected[o].type, b.expected[o].type);
    EXPECT_EQ(a.expected[o].shape, b.expected[o].shape);
    EXPECT_EQ(a.expected[o].f, b.expected[o].f);  // bit-exact f64, not rounded to the output type
    EXPECT_EQ(a.expected[o].i, b.expected[o].i);
  }
  EXPECT_EQ(a.rms, b.rms);
  EXPECT_EQ(a.inputs, b.inputs);
  EXPECT_EQ(a.reference_error, b.reference_error);
}

TEST_F(ReferenceCacheTest, ASecondRunReadsWhatTheFirstComputed) {
  {
    ir::Instance inst = bind("nn.softmax/kws_1x12");
    ReferenceCache cache(root_, 64 << 20);
    WorkloadReference first(inst, kDefaultBaseSeed, &cache);
    const Trial& computed = first.random_trial(0);
    const size_t stored = files();
    EXPECT_GE(stored, 1u);
    WorkloadReference uncached(inst);
    expect_same_trial(computed, uncached.random_trial(0));
    WorkloadReference second(inst, kDefaultBaseSeed, &cache);
    expect_same_trial(computed, second.random_trial(0));
    EXPECT_EQ(files(), stored) << "a hit stores nothing new";
  }
}

TEST_F(ReferenceCacheTest, IntegerOutputsRoundTrip) {
  // Pick the first suite workload whose outputs are integers, so the narrow encoding is exercised.
  for (const auto& w : codegen::testing::embedded_suite().workloads()) {
    ir::Instance inst = bind(w.full_name());
    const KernelInterface k = kernel_interface(inst);
    if (k.outputs.empty() || ir::is_float(k.outputs[0]->type) || k.tensor_bytes() > (1 << 20)) continue;
    ReferenceCache cache(root_, 64 << 20);
    WorkloadReference first(inst, kDefaultBaseSeed, &cache);
    WorkloadReference second(inst, kDefaultBaseSeed, &cache);
    expect_same_trial(first.random_trial(1), second.random_trial(1));
    return;
  }
  GTEST_SKIP() << "no small integer workload in the suite";
}

TEST_F(ReferenceCacheTest, KeysSeparateSeedsKindsAndWorkloads) {
  ir::Instance a = bind("nn.softmax/kws_1x12");
  std::string k0 = ReferenceCache::key(a, 1, "random");
  EXPECT_EQ(k0, ReferenceCache::key(a, 1, "random"));
  EXPECT_NE(k0, ReferenceCache::key(a, 2, "random"));
  EXPECT_NE(k0, ReferenceCache::key(a, 1, "edge"));
  for (const auto& w : codegen::testing::embedded_suite().workloads()) {
    if (w.pattern->name() != "nn.softmax" || w.full_name() == a.full_name()) continue;
    ir::Instance b = bind(w.full_name());
    EXPECT_NE(k0, ReferenceCache::key(b, 1, "random")) << w.full_name();
  }
}

TEST_F(ReferenceCacheTest, DamagedFilesAreRecomputedNotUsed) {
  ir::Instance inst = bind("nn.softmax/kws_1x12");
  ReferenceCache cache(root_, 64 << 20);
  const std::string key = ReferenceCache::key(inst, kDefaultBaseSeed, "random");
  WorkloadReference first(inst, kDefaultBaseSeed, &cache);
  const Trial& computed = first.random_trial(0);
  const std::string path = root_ + "/reference/" + key + ".ref";
  ASSERT_TRUE(fs::exists(path));
  {
    std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(40);
    char c = 0;
    f.read(&c, 1);
    f.seekp(40);
    c = static_cast<char>(c ^ 0x10);  // one flipped bit in an expected value
    f.write(&c, 1);
  }
  EXPECT_FALSE(cache.load(key, inst).has_value());
  EXPECT_FALSE(fs::exists(path)) << "a damaged file is removed";
  WorkloadReference second(inst, kDefaultBaseSeed, &cache);
  expect_same_trial(computed, second.random_trial(0));
  // A file of another workload under this key (a hash collision) does not fit its outputs.
  ir::Instance other = bind("linalg.gemm/small");
  StoredReference wrong;
  WorkloadReference other_ref(other);
  wrong.expected = other_ref.random_trial(0).expected;
  wrong.rms = other_ref.random_trial(0).rms;
  cache.store(key, wrong);
  EXPECT_FALSE(cache.load(key, inst).has_value());
}

TEST_F(ReferenceCacheTest, StaysWithinItsBudget) {
  ir::Instance inst = bind("linalg.gemm/small");
  WorkloadReference plain(inst);
  StoredReference ref;
  ref.expected = plain.random_trial(0).expected;
  ref.rms = plain.random_trial(0).rms;
  ReferenceCache probe(root_, 1ull << 30);
  probe.store("probe", ref);
  const uint64_t one = fs::file_size(root_ + "/reference/probe.ref");
  fs::remove(root_ + "/reference/probe.ref");

  const uint64_t budget = one * 5 + one / 2;  // room for five
  ReferenceCache cache(root_, budget);
  for (int k = 0; k < 12; ++k) cache.store("k" + std::to_string(k), ref);
  uint64_t total = 0;
  for (const auto& e : fs::directory_iterator(root_ + "/reference")) total += e.file_size();
  EXPECT_LE(total, budget);
  EXPECT_GE(files(), 3u);
  EXPECT_TRUE(cache.load("k11", inst).has_value()) << "the newest entry survives";
  EXPECT_FALSE(cache.load("k0", inst).has_value()) << "the oldest entry went";
}

}  // namespace
}  // namespace ekb::eval
