// The analysis of the compute layer and the trials derived from it: which data-dependent constructs
// are found, which trials they give, and that every trial's inputs stay inside their declared domains.
#include "eval/branch_trials.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "eval/edge_inputs.h"
#include "ir/inputs.h"
#include "codegen/suite_params.h"

namespace ekb::eval {
namespace {

using codegen::testing::bound_workload;

std::vector<BranchTrialKind> kinds(const std::vector<BranchTrialPlan>& plans) {
  std::vector<BranchTrialKind> out;
  for (const BranchTrialPlan& p : plans) out.push_back(p.kind);
  return out;
}

TEST(BranchTrials, CorrelationGetsConstantColumnsAlongItsReducedAxis) {
  const ir::Instance inst = bound_workload("linalg.correlation/mini");
  const ComputeLayerAnalysis a = analyze_compute_layer(inst);
  EXPECT_TRUE(a.has(ConstructKind::Condition));  // stddev <= eps
  EXPECT_TRUE(a.has(ConstructKind::Division));
  EXPECT_TRUE(a.has(ConstructKind::PartialMath));  // sqrt
  EXPECT_FALSE(a.has(ConstructKind::TimeSteppedStencil));
  ASSERT_EQ(a.reduced_axes.size(), 1u);
  EXPECT_EQ(a.reduced_axes[0].input, "data");
  EXPECT_EQ(a.reduced_axes[0].axis, 0);
  EXPECT_EQ(a.reduced_axes[0].var, "i");

  const std::vector<BranchTrialPlan> plans = plan_branch_trials(inst);
  ASSERT_EQ(kinds(plans), std::vector<BranchTrialKind>{BranchTrialKind::ConstantLines});
  EXPECT_EQ(plans[0].label, "constant lines: every other line along axis 0 of 'data' constant (reduced by i)");

  // data is [N, M]: columns 0, 2, ... constant, the others as drawn.
  const std::vector<ir::TensorData> in = generate_branch_inputs(inst, plans[0], 7);
  const int64_t N = inst.params.at("N"), M = inst.params.at("M");
  for (int64_t j = 0; j < M; ++j) {
    bool constant = true;
    for (int64_t i = 1; i < N; ++i) constant &= in[0].f[i * M + j] == in[0].f[j];
    EXPECT_EQ(constant, j % 2 == 0) << "column " << j;
  }
}

TEST(BranchTrials, AConstantLineHasAValueWhoseSumsAreExact) {
  const ir::Instance inst = bound_workload("linalg.correlation/mini");
  const std::vector<ir::TensorData> in = generate_branch_inputs(inst, plan_branch_trials(inst)[0], 7);
  const double v = in[0].f[0];
  EXPECT_EQ(v * 8, std::round(v * 8)) << v;  // a multiple of 1/8: N copies sum exactly in f32
}

TEST(BranchTrials, ARowNormalizationGetsConstantRows) {
  const ir::Instance inst = bound_workload("nn.layernorm/kwt1_99x64");
  const ComputeLayerAnalysis a = analyze_compute_layer(inst);
  ASSERT_FALSE(a.reduced_axes.empty());
  EXPECT_EQ(a.reduced_axes[0].input, "x");
  EXPECT_EQ(a.reduced_axes[0].axis, 1);
}

TEST(BranchTrials, SeidelGetsStripesAlongBothOfItsStencilAxes) {
  const ir::Instance inst = bound_workload("linalg.seidel_2d/mini");
  const ComputeLayerAnalysis a = analyze_compute_layer(inst);
  EXPECT_TRUE(a.has(ConstructKind::TimeSteppedStencil));
  EXPECT_EQ(a.stencil_rank, 2);
  const std::vector<BranchTrialPlan> plans = plan_branch_trials(inst);
  ASSERT_EQ(kinds(plans), (std::vector<BranchTrialKind>{BranchTrialKind::Stripes, BranchTrialKind::Stripes}));
  EXPECT_EQ(plans[0].axis, 0);
  EXPECT_EQ(plans[1].axis, 1);
  EXPECT_EQ(plans[0].label, "stripes: 'A_in' alternating between the domain's ends along axis 0 (time-stepped stencil)");
  // Rows alternate 0 (the domain's low end) and 1.
  const std::vector<ir::TensorData> in = generate_branch_inputs(inst, plans[0], 7);
  const int64_t N = inst.params.at("N");
  for (int64_t i = 0; i < N; ++i)
    for (int64_t j = 0; j < N; ++j) ASSERT_EQ(in[0].f[i * N + j], i % 2 ? 1.0 : 0.0) << i << "," << j;
}

TEST(BranchTrials, JacobiWithTwoBuffersIsAStencilToo) {
  const ir::Instance inst = bound_workload("linalg.jacobi_2d/mini");
  EXPECT_TRUE(analyze_compute_layer(inst).has(ConstructKind::TimeSteppedStencil));
}

TEST(BranchTrials, ArgmaxOfMagnitudesGetsTiesAtTheDomainsEnds) {
  const ir::Instance inst = bound_workload("linalg.iamax/n4096");
  const ComputeLayerAnalysis a = analyze_compute_layer(inst);
  EXPECT_TRUE(a.has(ConstructKind::ArgReduction));
  EXPECT_EQ(a.tie_inputs, std::vector<std::string>{"x"});
  const std::vector<BranchTrialPlan> plans = plan_branch_trials(inst);
  ASSERT_FALSE(plans.empty());
  const auto ties = std::find_if(plans.begin(), plans.end(), [](const auto& p) { return p.kind == BranchTrialKind::Ties; });
  ASSERT_NE(ties, plans.end());
  EXPECT_EQ(ties->label, "ties and thresholds: 'x' duplicates at its domain's ends");
  const std::vector<ir::TensorData> in = generate_branch_inputs(inst, *ties, 7);
  const int64_t at_max = std::count_if(in[0].f.begin(), in[0].f.end(), [](double v) { return std::abs(v) == 100; });
  EXPECT_GT(at_max, 2);  // the largest magnitude repeats
}

TEST(BranchTrials, AComparisonWithAConstantIsAThreshold) {
  const ir::Instance inst = bound_workload("nn.leaky_relu/" + codegen::testing::embedded_suite().find_pattern("nn.leaky_relu")->module.workloads[0].name);
  const ComputeLayerAnalysis a = analyze_compute_layer(inst);
  ASSERT_EQ(a.thresholds.size(), 1u);
  EXPECT_EQ(a.thresholds[0].input, "x");
  EXPECT_EQ(a.thresholds[0].value, 0.0);
  const std::vector<BranchTrialPlan> plans = plan_branch_trials(inst);
  ASSERT_EQ(kinds(plans), std::vector<BranchTrialKind>{BranchTrialKind::Ties});
  EXPECT_EQ(plans[0].label, "ties and thresholds: 'x' at 0");
  const std::vector<ir::TensorData> in = generate_branch_inputs(inst, plans[0], 7);
  const int64_t zeros = std::count(in[0].f.begin(), in[0].f.end(), 0.0);
  EXPECT_GT(zeros, in[0].num_elements() / 8);
}

TEST(BranchTrials, AProductWithoutDataDependentConstructsGetsNone) {
  const ir::Instance inst = bound_workload("linalg.gemm/mini");
  EXPECT_TRUE(analyze_compute_layer(inst).constructs.empty());
  EXPECT_TRUE(plan_branch_trials(inst).empty());
}

// Every pattern's first workload: at most kMaxBranchTrials trials, deterministic, every value inside
// its input's declared domain, `spd` inputs as drawn.
TEST(BranchTrials, EveryTrialOfTheSuiteStaysInsideTheDeclaredDomains) {
  int planned = 0, patterns_with_trials = 0;
  for (const auto& p : codegen::testing::embedded_suite().patterns()) {
    if (p->module.workloads.empty()) continue;
    const ir::Instance inst = bound_workload(p->name() + "/" + p->module.workloads[0].name);
    int64_t elements = 0;
    for (const ir::TensorInstance& t : inst.tensors)
      if (t.decl->role == ir::TensorRole::Input) elements += t.num_elements();
    const std::vector<BranchTrialPlan> plans = plan_branch_trials(inst);
    EXPECT_LE(plans.size(), static_cast<size_t>(kMaxBranchTrials)) << p->name();
    planned += static_cast<int>(plans.size());
    patterns_with_trials += !plans.empty();
    if (elements > (4 << 20)) continue;  // generating them would only slow the test
    const std::vector<ir::TensorData> random = ir::generate_inputs(inst, 11);
    for (const BranchTrialPlan& plan : plans) {
      EXPECT_FALSE(plan.label.empty());
      const std::vector<ir::TensorData> in = generate_branch_inputs(inst, plan, 11);
      const std::vector<ir::TensorData> again = generate_branch_inputs(inst, plan, 11);
      size_t k = 0;
      for (const ir::TensorInstance& t : inst.tensors) {
        if (t.decl->role != ir::TensorRole::Input) continue;
        const ir::TensorData& d = in[k];
        EXPECT_EQ(d.f, again[k].f) << p->name() << " " << plan.label;
        EXPECT_EQ(d.i, again[k].i) << p->name() << " " << plan.label;
        if (t.decl->domain.kind == ir::DomainKind::Spd) {
          EXPECT_EQ(d.f, random[k].f) << p->name() << ": '" << t.decl->name << "' is spd";
        } else if (const DomainEnds ends = input_domain_ends(inst, t); ends.usable) {
          for (int64_t e = 0; e < d.num_elements(); ++e)
            if (!ends.contains(d.as_double(e))) {
              ADD_FAILURE() << p->name() << " " << plan.label << ": '" << t.decl->name << "'[" << e << "] = "
                            << d.as_double(e) << " outside [" << ends.lo << ", " << ends.hi << "]";
              break;
            }
        }
        ++k;
      }
    }
  }
  std::printf("  %d branch trials over %d of %zu patterns\n", planned, patterns_with_trials, codegen::testing::embedded_suite().patterns().size());
}

}  // namespace
}  // namespace ekb::eval
