// insert_prefetches: the prefetch directive's record on a cpu loop becomes Prefetch statements
// opening each iteration of the loop, one per cache line to fetch.
#include <gtest/gtest.h>

#include "lir/mutator.h"
#include "lower/schedule_loops.h"
#include "lower_test_util.h"

namespace ekb::lower::testing {
namespace {

const char* kScale = "  params H, W\n  input x : f32[H, W] in [-1, 1]\n  output y : f32[H, W]\n  y[i, j] = 2.0 * x[i, j]";

std::string scaled(const std::string& workload, const std::string& schedule, const std::string& memory) {
  return pattern(kScale, workload) + "schedule cpu {\n" + schedule + "\n}\nmemory cpu {\n" + memory + "\n}\n";
}

// The For of stage y's loop `name` (directives name loops; a split gives them other variables).
const Stmt* loop_named(const Func& f, const std::string& name) {
  for (const Stage& st : f.stages)
    for (const StageLoop& l : st.loops)
      if (st.name == "y" && l.name == name && !l.vars.empty()) return find_loop(*f.body, l.vars[0]);
  return nullptr;
}

// The Prefetch statements at the start of the body of stage y's loop `name`.
std::vector<const Stmt*> opening_prefetches(const Func& f, const std::string& name) {
  const Stmt* loop = loop_named(f, name);
  EXPECT_NE(loop, nullptr) << name;
  std::vector<const Stmt*> found;
  if (!loop) return found;
  const Stmt& body = *loop->body;
  if (body.kind == StmtKind::Prefetch) found.push_back(&body);
  if (body.kind == StmtKind::Block)
    for (const StmtP& s : body.stmts) {
      if (s->kind != StmtKind::Prefetch) break;
      found.push_back(s.get());
    }
  return found;
}

std::vector<int64_t> byte_offsets(const std::vector<const Stmt*>& prefetches) {
  std::vector<int64_t> offsets;
  for (const Stmt* p : prefetches) offsets.push_back(p->byte_offset);
  return offsets;
}

TEST(InsertPrefetches, EachIterationOpensWithAPrefetchOfItsReadAhead) {
  const std::string text = scaled("H = 5, W = 64", "vectorize(y, j, 16)", "prefetch(y, j, x, 128)");
  // Before the pass, the directive is a record on the loop.
  auto before = lower_text(text, "simplify");
  const Stmt* loop = loop_named(before.func, "j");
  ASSERT_NE(loop, nullptr) << before.body;
  EXPECT_EQ(loop->prefetches.size(), 1u);
  EXPECT_TRUE(opening_prefetches(before.func, "j").empty()) << before.body;

  auto after = lower_text(text, "insert_prefetches");
  loop = loop_named(after.func, "j");
  ASSERT_NE(loop, nullptr) << after.body;
  EXPECT_TRUE(loop->prefetches.empty()) << "the record is consumed";
  std::vector<const Stmt*> prefetches = opening_prefetches(after.func, "j");
  ASSERT_EQ(prefetches.size(), 1u) << after.body;
  const Stmt& p = *prefetches[0];
  EXPECT_EQ(p.name, "x");
  // x[i * 64 + j * 16 + lane] at the vector loop's first lane, 128 floats (512 bytes) on.
  ASSERT_EQ(p.indices.size(), 1u);
  EXPECT_TRUE(uses_var(*p.indices[0], loop->name)) << to_string(*p.indices[0]);
  for_each_stmt(*loop->body, [&](const Stmt& inner) {
    if (inner.kind == StmtKind::For) EXPECT_FALSE(uses_var(*p.indices[0], inner.name)) << to_string(*p.indices[0]);
  });
  EXPECT_EQ(p.byte_offset, 512);
  EXPECT_NE(after.body.find("prefetch x["), std::string::npos) << after.body;
}

TEST(InsertPrefetches, EveryLineOfAnUnrolledBodyButOnlyTheFirstOfALongInnerLoop) {
  // Two vectors of 16 floats per iteration of j: the lines at +512 and +576 bytes.
  auto unrolled = lower_text(scaled("H = 5, W = 64", "vectorize(y, j, 16)\n  unroll(y, j, 2)", "prefetch(y, j, x, 128)"),
                             "insert_prefetches");
  EXPECT_EQ(byte_offsets(opening_prefetches(unrolled.func, "j")), (std::vector<int64_t>{512, 576})) << unrolled.body;
  // A row of 256 floats (sixteen lines) under each iteration of i: its first line only.
  auto rows = lower_text(scaled("H = 5, W = 256", "vectorize(y, j, 16)", "prefetch(y, i, x, 256)"), "insert_prefetches");
  EXPECT_EQ(byte_offsets(opening_prefetches(rows.func, "i")), (std::vector<int64_t>{1024})) << rows.body;
  // lines=N: N lines from the first element, whatever the span.
  auto three = lower_text(scaled("H = 5, W = 256", "vectorize(y, j, 16)", "prefetch(y, i, x, 256, lines=3)"),
                          "insert_prefetches");
  EXPECT_EQ(byte_offsets(opening_prefetches(three.func, "i")), (std::vector<int64_t>{1024, 1088, 1152})) << three.body;
}

TEST(InsertPrefetches, ALineTwoReadsShareIsPrefetchedOnce) {
  const char* body = "  params H, W\n  input x : f32[H, W] in [-1, 1]\n  output y : f32[H, W]\n  y[i, j] = x[i, j] * x[i, j]";
  auto l = lower_text(pattern(body, "H = 4, W = 64") + "memory cpu {\n  prefetch(y, i, x, 64)\n}\n", "insert_prefetches");
  // Each read spans the row's 64 floats, four lines from 64 floats (256 bytes) on; the second
  // read's are the same lines.
  EXPECT_EQ(byte_offsets(opening_prefetches(l.func, "i")), (std::vector<int64_t>{256, 320, 384, 448})) << l.body;
}

}  // namespace
}  // namespace ekb::lower::testing
