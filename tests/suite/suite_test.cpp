// The suite as a whole: counts and coverage, every file round-trips and verifies, the embedded copy
// matches suite/, and every workload's reference runs deterministically to finite outputs.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <set>

#include "param_cache.h"
#include "ir/inputs.h"
#include "ir/interpreter.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "suite/stats.h"
#include "suite/suite.h"

namespace ekb::suite {
namespace {

const Suite& embedded() {
  static const Suite s = Suite::load();
  return s;
}

TEST(Suite, CountsAndCoverage) {
  const Suite& s = embedded();
  // Issue 6's breadth: at least 331 patterns and 650 workloads.
  EXPECT_GE(s.patterns().size(), 331u);
  EXPECT_GE(s.workloads().size(), 650u);
  std::map<std::string, int> per_domain;
  std::map<std::string, std::set<std::string>> sizes_per_domain;
  for (const auto& p : s.patterns()) {
    ++per_domain[p->module.pattern.domain()];
    EXPECT_TRUE(p->module.pattern.has_level) << p->name();
    EXPECT_FALSE(p->module.pattern.source.empty()) << p->name();
    EXPECT_FALSE(p->module.workloads.empty()) << p->name() << " has no workload";
  }
  for (const auto& w : s.workloads()) {
    std::string size = workload_size_class(w);
    EXPECT_FALSE(size.empty()) << w.full_name() << " is neither micro nor mobile";
    sizes_per_domain[w.pattern->module.pattern.domain()].insert(size);
  }
  for (const auto& d : ir::pattern_domains()) {
    EXPECT_GE(per_domain[d], d == "graph" ? 12 : 5) << "domain " << d;
    EXPECT_TRUE(sizes_per_domain[d].count("micro")) << d << " has no micro workload";
    EXPECT_TRUE(sizes_per_domain[d].count("mobile")) << d << " has no mobile workload";
  }
  // The four MLPerf Tiny networks in float and in int8, and the other graphs issue 6 names.
  for (const char* g : {"graph.kws_dscnn", "graph.kws_dscnn_int8", "graph.vww_mobilenet_v1",
                        "graph.vww_mobilenet_v1_int8", "graph.resnet8", "graph.resnet8_int8",
                        "graph.ad_autoencoder", "graph.ad_autoencoder_int8", "graph.mbv2_stage",
                        "graph.mbv3_block", "graph.efficientnet_lite_stem", "graph.mobilevit_block",
                        "graph.whisper_encoder_layer", "graph.llm_decode_step", "graph.kws_audio_pipeline",
                        "graph.camera_pipe"})
    EXPECT_NE(s.find_pattern(g), nullptr) << g;
  for (const auto& p : s.patterns())
    if (p->module.pattern.domain() == "graph") EXPECT_EQ(p->module.pattern.level, ir::Level::Graph) << p->name();
}

// Held-out workloads catch solutions hard-coded to the public shapes only if their shape is new:
// every pattern needs one whose integer bindings differ from those of every public workload
// (another dtype alone is not another shape).
TEST(Suite, EveryPatternHasAHeldOutShape) {
  for (const auto& p : embedded().patterns())
    EXPECT_TRUE(has_new_heldout_shape(*p)) << p->path << ": no held-out workload with a shape that no public workload has";
}

TEST(Suite, EveryFileRoundTripsAndVerifies) {
  for (const auto& p : embedded().patterns()) {
    std::string printed = ir::print_module(p->module);
    ir::Module again = ir::parse_module(printed, p->path + " (printed)");
    EXPECT_TRUE(ir::equal(p->module, again)) << p->path << " changed in the round trip:\n" << printed;
    EXPECT_EQ(printed, ir::print_module(again)) << p->path;
    ir::Diagnostics diags(p->path);
    EXPECT_TRUE(ir::verify_module(p->module, diags)) << diags.format();
  }
}

TEST(Suite, EmbeddedCopyMatchesSourceTree) {
  Suite disk = Suite::load(EKB_SOURCE_DIR "/suite");
  ASSERT_EQ(disk.patterns().size(), embedded().patterns().size()) << "rebuild to re-embed suite/";
  for (size_t i = 0; i < disk.patterns().size(); ++i)
    EXPECT_TRUE(ir::equal(disk.patterns()[i]->module, embedded().patterns()[i]->module))
        << disk.patterns()[i]->path << " differs from the embedded copy: rebuild";
}

// One test per workload, so that ctest runs them in parallel and names the one that fails.
class WorkloadReference : public ::testing::TestWithParam<std::string> {};

TEST_P(WorkloadReference, RunsDeterministicallyToFiniteOutputs) {
  auto w = embedded().find_workload(GetParam());
  ASSERT_TRUE(w.has_value());
  ir::Instance inst = bind_workload(*w);
  auto inputs = ir::generate_inputs(inst, 1);
  auto out1 = ir::run_reference(inst, inputs);
  auto out2 = ir::run_reference(inst, ir::generate_inputs(inst, 1));
  ASSERT_EQ(out1.size(), out2.size());
  for (size_t k = 0; k < out1.size(); ++k) {
    EXPECT_EQ(out1[k].f, out2[k].f);
    EXPECT_EQ(out1[k].i, out2[k].i);
    int64_t n = out1[k].num_elements();
    int64_t nonfinite = 0;
    for (int64_t e = 0; e < n && out1[k].is_float(); ++e) nonfinite += !std::isfinite(out1[k].f[e]);
    EXPECT_EQ(nonfinite, 0) << "output " << k << " has non-finite values on random inputs";
    // Outputs must vary with the inputs: constant outputs would let constant kernels pass.
    auto other = ir::run_reference(inst, ir::generate_inputs(inst, 2));
    EXPECT_TRUE(other[k].f != out1[k].f || other[k].i != out1[k].i)
        << "output " << k << " does not depend on the inputs";
  }
}

std::vector<std::string> all_workload_names() {
  return ekb::testing::cached_param_list("all_workload_names", "", [] {
    std::vector<std::string> names;
    for (const auto& w : embedded().workloads()) names.push_back(w.full_name());
    return names;
  });
}

std::string test_name(const ::testing::TestParamInfo<std::string>& info) {
  std::string n;
  for (char c : info.param) n += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  return n;
}

INSTANTIATE_TEST_SUITE_P(All, WorkloadReference, ::testing::ValuesIn(all_workload_names()), test_name);

}  // namespace
}  // namespace ekb::suite
