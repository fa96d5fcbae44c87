// apply_schedule's dispatch through the directive table (ir/directives.h): every directive has a
// pass, and a block without a target is refused per target where a directive has no meaning.
#include <gtest/gtest.h>

#include <set>

#include "ir/directives.h"
#include "lower/apply_schedule.h"
#include "lower_test_util.h"

namespace ekb::lower::testing {
namespace {

TEST(ApplySchedule, EveryDirectiveOfTheTableHasAPassAndNoOtherHasOne) {
  std::set<std::string> table, passes;
  for (const ir::DirectiveInfo& d : ir::directive_table()) table.insert(std::string(d.verb));
  for (const std::string& v : directive_pass_verbs()) EXPECT_TRUE(passes.insert(v).second) << v << " twice";
  EXPECT_EQ(passes, table);
}

TEST(ApplySchedule, AnUntargetedBlockIsRefusedWhereADirectiveHasNoMeaning) {
  const std::string text = pattern("  params N\n  input x : f32[N] in [-1, 1]\n  output y : f32[N]\n  y[i] = x[i]", "N = 64") +
                           "schedule {\n  parallel(y, i)\n}\n";
  auto l = ir::testing::load(text);
  ASSERT_TRUE(l.inst) << l.diags;  // the verifier cannot tell which target it is for
  EXPECT_NE(scheduled_lir(text).find("parallel"), std::string::npos);
  for (ir::Target gpu : {ir::Target::Cuda, ir::Target::OpenCL}) {
    LowerOptions o;
    o.target = gpu;
    try {
      lower(*l.inst, o);
      ADD_FAILURE() << "lowered for " << ir::target_name(gpu);
    } catch (const ScheduleError& e) {
      std::string what = e.what();
      EXPECT_NE(what.find("'parallel(y, i)': parallel runs a loop on cpu threads; it has no meaning on gpu"),
                std::string::npos)
          << what;
    }
  }
}

TEST(ApplySchedule, LayersCanBeIgnored) {
  const std::string text = pattern("  params N\n  input x : f32[N] in [-1, 1]\n  output y : f32[N]\n  y[i] = x[i]", "N = 64") +
                           "schedule cpu {\n  parallel(y, i)\n}\n";
  auto l = ir::testing::load(text);
  ASSERT_TRUE(l.inst) << l.diags;
  LowerOptions o;
  o.apply_layers = false;
  EXPECT_EQ(to_string(*lower(*l.inst, o).body).find("parallel"), std::string::npos);
}

}  // namespace
}  // namespace ekb::lower::testing
