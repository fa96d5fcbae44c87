// Trials derived from the compute layer: inputs that reach the branches random inputs never reach.
//
// Random inputs drawn uniformly from a domain almost never make a column constant, two elements
// equal, an element sit exactly on a threshold, or a field rough enough that a time-stepped
// stencil's order of updates shows. A kernel that drops a guard (`stddev <= eps` in a correlation),
// breaks ties the other way (argmax), or parallelizes a loop-carried sweep passes such trials.
//
// analyze_compute_layer() finds the constructs whose outcome depends on data values:
//   - conditions on data (select, comparisons), divisions by data, partial math (sqrt, rsqrt, log,
//     pow, atan2) of data, min/max (intrinsics and reductions), argmax/argmin reductions;
//   - the input axes each reduction runs along (directly, or through one temp defined elementwise);
//   - input elements compared with a constant (thresholds) or with other elements (ties);
//   - time-stepped stencils: an update inside a loop whose variable is not among the written
//     indices, reading a computed tensor at offset indices.
// plan_branch_trials() turns them into at most kMaxBranchTrials trials, each only where its
// construct is present:
//   - constant lines: every other line along each reduced axis of an input is made constant (a
//     value with few significant bits, so sums and means of the line are exact in any order):
//     variances become 0, maxima tie, guards fire;
//   - ties and thresholds: elements replaced by the domain's ends (duplicates at the maximum and
//     minimum) and by the constants they are compared with;
//   - stripes: the stencil's inputs alternate between their domain's ends along its outermost and
//     along its innermost offset axis (two trials: an update order broken across rows shows most
//     with rows alternating, one broken along a row with columns alternating). Stripes are the
//     highest frequency a 2-D average damps only 3-fold per step (a checkerboard: 9-fold).
// Every value stays inside its input's declared domain; `spd` inputs are left as drawn.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "ir/instance.h"
#include "ir/tensor_data.h"

namespace ekb::eval {

enum class ConstructKind : uint8_t { Condition, Division, PartialMath, MinMax, ArgReduction, TimeSteppedStencil };
std::string_view construct_kind_name(ConstructKind k);

struct DataDependentConstruct {
  ConstructKind kind = ConstructKind::Condition;
  ir::SourceLoc loc;
};

struct ReducedAxis {
  std::string input;
  int axis = 0;
  std::string var;  // the reduction's variable
};

struct ThresholdValue {
  std::string input;
  double value = 0;
};

struct ComputeLayerAnalysis {
  std::vector<DataDependentConstruct> constructs;
  std::vector<ReducedAxis> reduced_axes;    // the first found per input
  std::vector<std::string> tie_inputs;      // read element by element by an argmax/argmin or a comparison of data with data
  std::vector<ThresholdValue> thresholds;   // input elements compared with (or clamped to) a constant
  int stencil_rank = 0;                     // of the tensor a time-stepped stencil updates; 0: none
  std::vector<int> stencil_axes;            // its axes read at an offset, ascending

  bool has(ConstructKind k) const;
};

ComputeLayerAnalysis analyze_compute_layer(const ir::Instance& inst);

enum class BranchTrialKind : uint8_t { ConstantLines, Ties, Stripes };

struct BranchTrialPlan {
  BranchTrialKind kind = BranchTrialKind::ConstantLines;
  std::string label;                      // what the inputs are, for messages: "constant lines along axis 0 of 'data' ..."
  std::vector<ReducedAxis> lines;         // ConstantLines
  std::vector<std::string> tie_inputs;    // Ties
  std::vector<ThresholdValue> thresholds; // Ties
  std::vector<std::string> striped;       // Stripes: the inputs striped
  int axis = 0;                           // Stripes
};

inline constexpr int kMaxBranchTrials = 3;

std::vector<BranchTrialPlan> plan_branch_trials(const ir::Instance& inst);

// The plan's inputs: ir::generate_inputs(inst, seed), then changed as the plan says.
std::vector<ir::TensorData> generate_branch_inputs(const ir::Instance& inst, const BranchTrialPlan& plan, uint64_t seed);

}  // namespace ekb::eval
