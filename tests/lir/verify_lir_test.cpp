// The loop-IR well-formedness check (lir/verify_lir.h) that EKB_VERIFY_LIR=1 runs after every
// pass: what it refuses, and that the pipeline passes it for default and scheduled lowerings.
#include <gtest/gtest.h>

#include "lir/verify_lir.h"
#include "lower/lower_test_util.h"

namespace ekb::lir {
namespace {

using lower::testing::pattern;

// A function writing y : f32[4] with `body`.
Func with_body(StmtP body) {
  Func f;
  f.name = "t";
  f.buffers = {Buffer{"y", ScalarType::F32, {4}, BufferRole::Output}};
  f.body = std::move(body);
  return f;
}

StmtP store_y(ExprP index) { return make_store("y", {std::move(index)}, float_imm(ScalarType::F32, 1)); }

TEST(VerifyLir, AWellFormedLoopPasses) {
  Func f = with_body(make_for("i", index_imm(0), index_imm(4), store_y(var("i", ScalarType::Index))));
  EXPECT_EQ(lir_problem(f, LirForm::FlatAccesses), "");
}

TEST(VerifyLir, FindsWhatLoopIrPromisesBroken) {
  const ExprP i = var("i", ScalarType::Index);
  auto loop = [](StmtP body) { return make_for("i", index_imm(0), index_imm(4), std::move(body)); };
  struct Case {
    Func f;
    LirForm form;
    std::string problem;
  };
  const std::vector<Case> cases = {
      {with_body(loop(store_y(var("j", ScalarType::Index)))), LirForm::None,
       "variable 'j' is read outside the loop, let or declaration that binds it"},
      {with_body(loop(store_y(var("i", ScalarType::F32)))), LirForm::None, "variable 'i' is read as f32 but bound as index"},
      {with_body(loop(make_store("z", {i}, float_imm(ScalarType::F32, 1)))), LirForm::None,
       "a store of 'z', which is neither a buffer of the function nor allocated around it"},
      {with_body(loop(make_store("y", {i, i}, float_imm(ScalarType::F32, 1)))), LirForm::None,
       "a store of 'y' (rank 1) has 2 indices"},
      {with_body(make_for("i", index_imm(0), index_imm(-1), store_y(i))), LirForm::None,
       "loop 'i' has the negative extent -1"},
      {with_body(loop(loop(store_y(i)))), LirForm::None, "variable 'i' is bound again inside its own binding"},
      {with_body(loop(make_assign("i", index_imm(0)))), LirForm::None,
       "an assignment to 'i', which is no declared variable in scope"},
      {with_body(make_allocate("t", ScalarType::F32, 4, MemoryScope::Stack,
                               loop(make_store("t", {i, i}, float_imm(ScalarType::F32, 1))))),
       LirForm::FlatAccesses, "a store of 't' has 2 indices after flatten_storage"},
  };
  for (const Case& c : cases) {
    const std::string got = lir_problem(c.f, c.form);
    EXPECT_NE(got.find(c.problem), std::string::npos) << c.problem << "\ngot: " << got;
  }
}

// What the gpu passes leave (a Block of Kernels with their launches, thread all-reduces) and the
// cpu prefetches are checked too.
TEST(VerifyLir, LooksInsideKernelsAllReducesAndPrefetches) {
  const ExprP i = var("i", ScalarType::Index);
  auto kernel = [](StmtP body, Launch launch = {}) {
    return make_kernel("ekb_kernel_0", std::move(launch), std::move(body));
  };
  auto declare_acc = [](StmtP body) {
    return make_declare("acc", ScalarType::F32, float_imm(ScalarType::F32, 0), std::move(body));
  };
  auto all_reduce = [](std::string var, ScalarType t, std::string slots, int axis = 0) {
    return make_thread_all_reduce({Stmt::Combine{std::move(var), t, BinOp::Add, std::move(slots)}}, axis,
                                  AllReduceForm::Tree);
  };
  auto slots = [](StmtP body) {
    return make_allocate("red", ScalarType::F32, 32, MemoryScope::Shared, std::move(body));
  };
  auto grid_stride = [](std::vector<std::string> loops, std::vector<ExprP> extents) {
    Launch l;
    l.kind = LaunchKind::GridStride;
    l.loops = std::move(loops);
    l.extents = std::move(extents);
    return l;
  };
  auto spread = [](StmtP body) {
    return make_for("i", index_imm(0), index_imm(4), std::move(body), ForKind::GpuGridStride);
  };
  struct Case {
    Func f;
    std::string problem;  // "" when well formed
  };
  const std::vector<Case> cases = {
      {with_body(kernel(store_y(index_imm(0)))), ""},
      {with_body(kernel(slots(declare_acc(all_reduce("acc", ScalarType::F32, "red"))))), ""},
      {with_body(kernel(spread(store_y(i)), grid_stride({"i"}, {index_imm(4)}))), ""},
      {with_body(make_for("i", index_imm(0), index_imm(4), make_prefetch("y", i, 64))), ""},
      {with_body(kernel(store_y(var("j", ScalarType::Index)))),
       "variable 'j' is read outside the loop, let or declaration that binds it"},
      {with_body(kernel(make_store("z", {index_imm(0)}, float_imm(ScalarType::F32, 1)))),
       "a store of 'z', which is neither a buffer of the function nor allocated around it"},
      {with_body(kernel(kernel(store_y(index_imm(0))))), "kernel 'ekb_kernel_0' is inside kernel 'ekb_kernel_0'"},
      {with_body(make_let("n", index_imm(0), kernel(store_y(var("n", ScalarType::Index))))),
       "variable 'n' is read outside the loop, let or declaration that binds it"},
      {with_body(kernel(spread(store_y(i)), grid_stride({"i"}, {var("n", ScalarType::Index)}))),
       "variable 'n' is read outside the loop, let or declaration that binds it"},
      {with_body(kernel(spread(store_y(i)), grid_stride({"i"}, {}))),
       "kernel 'ekb_kernel_0' launches over 1 loops with 0 extents"},
      {with_body(kernel(spread(store_y(i)))), "kernel 'ekb_kernel_0' has grid-stride loops {i} but launches over {}"},
      {with_body(slots(declare_acc(all_reduce("acc", ScalarType::F32, "red")))),
       "a thread all-reduce outside any kernel"},
      {with_body(kernel(slots(all_reduce("acc", ScalarType::F32, "red")))),
       "a thread all-reduce of 'acc', which is no declared variable in scope"},
      {with_body(kernel(slots(declare_acc(all_reduce("acc", ScalarType::F64, "red"))))),
       "a thread all-reduce of 'acc' as f64, declared f32"},
      {with_body(kernel(declare_acc(all_reduce("acc", ScalarType::F32, "red")))),
       "a thread all-reduce of 'acc' through 'red', which is not allocated around it"},
      {with_body(kernel(slots(declare_acc(all_reduce("acc", ScalarType::F32, "red", 3))))),
       "a thread all-reduce along axis 3"},
      {with_body(make_for("i", index_imm(0), index_imm(4), make_prefetch("z", i, 64))),
       "a prefetch of 'z', which is neither a buffer of the function nor allocated around it"},
      {with_body(make_for("i", index_imm(0), index_imm(4), make_prefetch("y", var("j", ScalarType::Index), 64))),
       "variable 'j' is read outside the loop, let or declaration that binds it"},
  };
  for (const Case& c : cases) {
    const std::string got = lir_problem(c.f, LirForm::FlatAccesses);
    if (c.problem.empty())
      EXPECT_EQ(got, "");
    else
      EXPECT_NE(got.find(c.problem), std::string::npos) << c.problem << "\ngot: " << got;
  }
}

TEST(VerifyLir, AFormOnceEstablishedMustHold) {
  ExprP padded = load("y", ScalarType::F32, {var("i", ScalarType::Index)});
  auto e = std::make_shared<Expr>(*padded);
  e->boundary = ir::Boundary::Edge;
  Func f = with_body(make_for("i", index_imm(0), index_imm(4), make_store("y", {var("i", ScalarType::Index)}, e)));
  EXPECT_EQ(lir_problem(f, LirForm::NoReductions), "");
  EXPECT_NE(lir_problem(f, LirForm::NoReductions | LirForm::NoBoundaries).find("still has a boundary after lower_boundaries"),
            std::string::npos);
}

TEST(VerifyLir, TheErrorNamesThePassAfterWhichTheIrBroke) {
  Func f = with_body(store_y(var("j", ScalarType::Index)));
  try {
    verify_lir(f, LirForm::None, "some_pass");
    FAIL() << "accepted";
  } catch (const MalformedLir& e) {
    EXPECT_NE(std::string(e.what()).find("the loop IR is malformed after pass 'some_pass': variable 'j'"),
              std::string::npos)
        << e.what();
  }
}

// Every pass, for cpu and for a gpu target, with schedules that consume and create loops, caches
// and partial-result stages.
TEST(VerifyLir, ThePipelineKeepsTheIrWellFormedAfterEveryPass) {
  const std::string gemm = pattern(
      "  params M, N, K\n  input A : f32[M, K] in [-1, 1]\n  input B : f32[K, N] in [-1, 1]\n  output C : f32[M, N]\n"
      "  C[i, j] = sum(k in 0..K: A[i, k] * B[k, j])",
      "M = 20, N = 24, K = 9");
  const std::vector<std::pair<std::string, ir::Target>> texts = {
      {gemm, ir::Target::Cpu},
      {gemm + "schedule cpu {\n  tile(C, i, j, 8, 8, io, jo, ii, ji, tail=peel)\n  reorder(C, io, jo, k, ii, ji)\n"
              "  parallel(C, io)\n  vectorize(C, ji, 8)\n}\nmemory cpu {\n  cache_write(C, jo, local, Cl)\n}\n",
       ir::Target::Cpu},
      {gemm + "schedule cpu {\n  split(C, k, 4, ko, ki)\n  rfactor(C, ko, kf)\n}\n", ir::Target::Cpu},
      {gemm + "schedule gpu {\n  split(C, i, 4, bi, ti)\n  bind(C, bi, block.x)\n  bind(C, ti, thread.x)\n}\n",
       ir::Target::Cuda},
      {gemm, ir::Target::OpenCL},
      // A reduction bound to threads: each thread's part, then a ThreadAllReduce over the block.
      {gemm + "schedule gpu {\n  split(C, k, 3, ko, ki)\n  reorder(C, i, j, ki, ko)\n  bind(C, i, block.x)\n"
              "  bind(C, ki, thread.x)\n}\n",
       ir::Target::Cuda},
  };
  for (const auto& [text, target] : texts) {
    auto l = ir::testing::load(text);
    ASSERT_TRUE(l.inst) << l.diags;
    // The native compiler's options, with the gpu passes (kernels, launches, all-reduces) for gpu.
    lower::LowerOptions o = lower::lower_options_for(target);
    o.verify = true;
    EXPECT_NO_THROW(lower::lower(*l.inst, o)) << text;
  }
}

}  // namespace
}  // namespace ekb::lir
