// The default GPU schedule as the OpenCL emitter prints it: kernels spelled in OpenCL C 1.2, the
// launch description that the opencl backend's own parser accepts (runtime/opencl_launch.h), half
// tensors through vload_half/vstore_half, temps in declared scratch memory. Building and running
// the output on a platform: tests/codegen/opencl_suite_test.cpp.
#include <gtest/gtest.h>

#include "codegen/opencl_emitter.h"
#include "lower/lower.h"
#include "runtime/opencl_launch.h"
#include "suite_params.h"

namespace ekb::codegen {
namespace {

struct Emitted {
  ir::Instance inst;
  std::string source;
};

Emitted emitted(const std::string& workload) {
  Emitted e{testing::bound_workload(workload), ""};
  e.source = emit_opencl_source(lower::lower(e.inst, lower::lower_options_for(ir::Target::OpenCL)));
  return e;
}

runtime::opencl::LaunchNames names_of(const ir::Instance& inst) {
  runtime::opencl::LaunchNames n;
  for (ir::TensorRole role : {ir::TensorRole::Input, ir::TensorRole::Output})
    for (const auto& t : inst.tensors)
      if (t.decl->role == role) n.tensors.push_back(t.decl->name);
  for (const auto& p : inst.pattern().params) n.params.push_back(p.name);
  return n;
}

std::vector<int64_t> params_of(const ir::Instance& inst) {
  std::vector<int64_t> v;
  for (const auto& p : inst.pattern().params) v.push_back(inst.params.at(p.name));
  return v;
}

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t p = text.find(what); p != std::string::npos; p = text.find(what, p + 1)) ++n;
  return n;
}

TEST(OpenCLEmitter, ElementwiseStageIsOneGridStrideKernel) {
  Emitted e = emitted("nn.relu6/mbv2_035_96_48x48x48");
  EXPECT_EQ(count(e.source, "__kernel void"), 1u) << e.source;
  EXPECT_NE(e.source.find("ekb_flat += (int64_t)(uint)get_global_size(0)"), std::string::npos) << e.source;
  EXPECT_NE(e.source.find("__global const float* restrict x"), std::string::npos) << e.source;
  EXPECT_EQ(e.source.find("LL"), std::string::npos) << "long long is reserved in OpenCL C\n" << e.source;
  // The description parses with the backend's parser and launches the one kernel over the elements.
  runtime::opencl::LaunchDescription d = runtime::opencl::parse_launch_description(e.source, names_of(e.inst));
  ASSERT_EQ(d.launches.size(), 1u);
  EXPECT_EQ(d.launches[0].kernel, "ekb_kernel_0");
  EXPECT_TRUE(d.scratch.empty());
  runtime::opencl::ResolvedLaunch r = runtime::opencl::resolve(d.launches[0], params_of(e.inst));
  ASSERT_EQ(r.local, (std::vector<size_t>{256}));
  EXPECT_EQ(r.global[0] % 256, 0u);
  EXPECT_LE(r.global[0], 65535u * 256u);  // at most 65535 groups: a grid-stride loop covers the rest
}

TEST(OpenCLEmitter, OrderedUpdateRunsOnOneWorkItemBetweenParallelStages) {
  // The biquad cascade: initialization spread, the recurrence over time on one work-item, copies
  // spread again, launched in program order.
  Emitted e = emitted("audio.biquad_df1/block_2x32");
  size_t parallel = e.source.find("/* s, t over work-groups and work-items */");
  size_t sequential = e.source.find("sequential: one thread");
  ASSERT_NE(parallel, std::string::npos) << e.source;
  ASSERT_NE(sequential, std::string::npos) << e.source;
  EXPECT_LT(parallel, sequential);
  runtime::opencl::LaunchDescription d = runtime::opencl::parse_launch_description(e.source, names_of(e.inst));
  ASSERT_EQ(d.launches.size(), count(e.source, "__kernel void"));
  for (size_t k = 0; k < d.launches.size(); ++k) EXPECT_EQ(d.launches[k].kernel, "ekb_kernel_" + std::to_string(k));
  bool one_item = false;
  for (const auto& l : d.launches) {
    runtime::opencl::ResolvedLaunch r = runtime::opencl::resolve(l, params_of(e.inst));
    one_item = one_item || (r.global == std::vector<size_t>{1} && r.local == std::vector<size_t>{1});
  }
  EXPECT_TRUE(one_item) << e.source;
}

TEST(OpenCLEmitter, TempsLiveInDeclaredScratch) {
  Emitted e = emitted("audio.lpc/g729_240_p10");
  runtime::opencl::LaunchDescription d = runtime::opencl::parse_launch_description(e.source, names_of(e.inst));
  ASSERT_EQ(d.scratch.size(), 1u) << e.source;
  EXPECT_EQ(d.scratch[0].name, "ekb_scratch");
  EXPECT_GT(runtime::opencl::evaluate(d.scratch[0].bytes, params_of(e.inst)), 0);
  for (const auto& l : d.launches) {
    ASSERT_FALSE(l.args.empty());
    EXPECT_EQ(l.args.back().kind, runtime::opencl::LaunchArg::Kind::Scratch);
  }
  EXPECT_NE(e.source.find("__global uchar* restrict ekb_scratch"), std::string::npos) << e.source;
  EXPECT_EQ(e.source.find("__attribute__((aligned"), std::string::npos) << e.source;
}

TEST(OpenCLEmitter, HalfTensorsGoThroughVloadAndVstore) {
  Emitted e = emitted("audio.fir/audio48k_480x128_f16");
  EXPECT_NE(e.source.find("__global const half* restrict"), std::string::npos) << e.source;
  EXPECT_NE(e.source.find("vload_half("), std::string::npos) << e.source;
  EXPECT_NE(e.source.find("vstore_half_rte("), std::string::npos) << e.source;
  EXPECT_EQ(e.source.find("cl_khr_fp16"), std::string::npos) << "PoCL lacks it; the ABI does not need it";
}

TEST(OpenCLEmitter, DoubleEnablesFp64OnlyWhereUsed) {
  EXPECT_NE(emitted("audio.biquad_df2t/xover_6x48000_f64").source.find("#pragma OPENCL EXTENSION cl_khr_fp64 : enable"),
            std::string::npos);
  EXPECT_EQ(emitted("nn.relu6/mbv2_035_96_48x48x48").source.find("cl_khr_fp64"), std::string::npos);
}

}  // namespace
}  // namespace ekb::codegen
