// plan_storage: small temps on the stack, larger ones in the declared scratch workspace at
// 64-byte aligned offsets in declaration order.
#include "lower/plan_storage.h"

#include <gtest/gtest.h>

#include "lower_test_util.h"

namespace ekb::lower::testing {
namespace {

TEST(PlanStorage, StackOrScratch) {
  auto l = lower_text(pattern(R"(
  params N
  input  x : f32[N]
  output y : f32[N]
  temp   big1 : f32[N]
  temp   small : f32[4]
  temp   big2 : i8[N]
  big1[i] = x[i]
  small[i] = x[i]
  big2[i] = cast(i8, big1[i])
  y[i] = big1[i] + small[i % 4] + cast(f32, big2[i])
)",
                                                "N = 1500"),
                               "plan_storage");
  EXPECT_EQ(l.body.rfind("allocate big1: f32[1500] in scratch +0\n"
                         "allocate small: f32[4] in stack\n"
                         "allocate big2: i8[1500] in stack\n",
                         0),
            0u)
      << l.body;
  EXPECT_EQ(l.func.scratch_bytes, 6016);  // 6000 rounded up to 64

  StoragePlanOptions tiny;
  tiny.max_stack_bytes = 8;
  LowerOptions o;
  o.storage = tiny;
  auto m = lower_text(pattern(R"(
  params N
  input  x : f32[N]
  output y : f32[N]
  temp   a : f32[N]
  temp   b : f32[N]
  a[i] = x[i]
  b[i] = a[i]
  y[i] = b[i]
)",
                                                "N = 3"),
                               "plan_storage", o);
  EXPECT_NE(m.body.find("allocate a: f32[3] in scratch +0\nallocate b: f32[3] in scratch +64\n"),
            std::string::npos)
      << m.body;
  EXPECT_EQ(m.func.scratch_bytes, 128);
}

}  // namespace
}  // namespace ekb::lower::testing
