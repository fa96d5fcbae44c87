// The targets (ir/target.h): names at the edges, sets for layer blocks and directives.
#include <gtest/gtest.h>

#include <stdexcept>

#include "ir/target.h"

namespace ekb::ir {
namespace {

TEST(Target, EveryTargetParsesBackFromItsName) {
  for (Target t : kTargets) EXPECT_EQ(parse_target(target_name(t)), t) << target_name(t);
  EXPECT_EQ(target_names(), (std::vector<std::string>{"cpu", "cuda", "opencl"}));
  EXPECT_FALSE(parse_target("gpu").has_value());  // a layer block's target, not a backend
  EXPECT_FALSE(parse_target("CPU").has_value());
}

TEST(Target, AnUnknownNameIsAnErrorNamingTheTargetsAndTheNearest) {
  try {
    target_from_name("opencll");
    FAIL() << "accepted";
  } catch (const std::invalid_argument& e) {
    std::string what = e.what();
    EXPECT_NE(what.find("unknown target 'opencll'"), std::string::npos) << what;
    EXPECT_NE(what.find("cpu, cuda and opencl"), std::string::npos) << what;
    EXPECT_NE(what.find("did you mean 'opencl'?"), std::string::npos) << what;
  }
  EXPECT_EQ(target_from_name("opencl"), Target::OpenCL);
}

TEST(Target, GpuMeansCudaAndOpenCL) {
  EXPECT_FALSE(is_gpu(Target::Cpu));
  EXPECT_TRUE(is_gpu(Target::Cuda));
  EXPECT_TRUE(is_gpu(Target::OpenCL));
  EXPECT_EQ(parse_layer_target("gpu"), kGpuTargets);
  EXPECT_EQ(parse_layer_target("cpu"), kCpuTargets);
  EXPECT_EQ(parse_layer_target(""), kAllTargets);  // a block without a target applies everywhere
  EXPECT_FALSE(parse_layer_target("cuda").has_value());
}

TEST(TargetSet, ContainsTargetsAndSubsets) {
  EXPECT_TRUE(kAllTargets.contains(kGpuTargets));
  EXPECT_FALSE(kGpuTargets.contains(kAllTargets));
  EXPECT_FALSE(kCpuTargets.contains(Target::Cuda));
  EXPECT_TRUE(TargetSet{}.empty());
  EXPECT_EQ(kGpuTargets.targets(), (std::vector<Target>{Target::Cuda, Target::OpenCL}));
  EXPECT_EQ(target_set_text(kGpuTargets), "gpu");
  EXPECT_EQ(target_set_text(kAllTargets), "cpu, cuda or opencl");
  EXPECT_EQ(target_set_text(TargetSet{Target::Cpu, Target::OpenCL}), "cpu or opencl");
}

}  // namespace
}  // namespace ekb::ir
