// The loop IR's constructors, structural equality, traversal helpers and printer.
#include "lir/loop_ir.h"

#include <gtest/gtest.h>

#include <cmath>

#include "lir/mutator.h"

namespace ekb::lir {
namespace {

TEST(LoopIr, ConstructorsTypeTheirResults) {
  ExprP i = var("i", ScalarType::Index);
  EXPECT_EQ(binary(BinOp::Add, i, index_imm(1))->type, ScalarType::Index);
  EXPECT_EQ(binary(BinOp::Lt, i, index_imm(1))->type, ScalarType::Bool);
  EXPECT_EQ(binary(BinOp::And, bool_imm(true), bool_imm(false))->type, ScalarType::Bool);
  EXPECT_EQ(unary(UnOp::Not, bool_imm(true))->type, ScalarType::Bool);
  EXPECT_EQ(cast(ScalarType::F32, i)->type, ScalarType::F32);
  EXPECT_EQ(select(bool_imm(true), float_imm(ScalarType::F64, 1), float_imm(ScalarType::F64, 2))->type,
            ScalarType::F64);
}

TEST(LoopIr, StructuralEquality) {
  auto mk = [] {
    return binary(BinOp::Mul, load("x", ScalarType::F32, {var("i", ScalarType::Index)}),
                  float_imm(ScalarType::F32, 2));
  };
  EXPECT_TRUE(equal(mk(), mk()));
  EXPECT_FALSE(equal(mk(), binary(BinOp::Mul, load("y", ScalarType::F32, {var("i", ScalarType::Index)}),
                                  float_imm(ScalarType::F32, 2))));
  EXPECT_FALSE(equal(index_imm(1), int_imm(ScalarType::I32, 1)));  // types differ
  EXPECT_TRUE(equal(float_imm(ScalarType::F32, std::nan("")), float_imm(ScalarType::F32, std::nan(""))));
}

TEST(LoopIr, BlocksFlattenAndDropEmptyOnes) {
  StmtP a = make_store("y", {index_imm(0)}, float_imm(ScalarType::F32, 1));
  StmtP b = make_block({make_block({}), make_block({a, a}), a});
  ASSERT_EQ(b->kind, StmtKind::Block);
  EXPECT_EQ(b->stmts.size(), 3u);
  EXPECT_EQ(make_block({a}), a);  // a single statement is not wrapped
  EXPECT_TRUE(is_no_op(*make_block({})));
}

TEST(LoopIr, FreshNamesAreUnique) {
  Func f;
  f.names = {"x", "i"};
  EXPECT_EQ(f.fresh_name("i"), "i_1");
  EXPECT_EQ(f.fresh_name("i"), "i_2");
  EXPECT_EQ(f.fresh_name("j"), "j");
}

TEST(LoopIr, SubstituteAndQueries) {
  ExprP i = var("i", ScalarType::Index);
  ExprP e = binary(BinOp::Add, load("x", ScalarType::Index, {i}), i);
  ExprP s = substitute(e, "i", index_imm(3));
  EXPECT_EQ(to_string(*s), "(x[3] + 3)");
  EXPECT_TRUE(uses_var(*e, "i"));
  EXPECT_FALSE(uses_var(*s, "i"));
  EXPECT_TRUE(has_load(*e));
  EXPECT_FALSE(has_load(*i));
}

TEST(LoopIr, CoefficientOfAVariableInAffineIndices) {
  auto idx = [](const std::string& v) { return var(v, ScalarType::Index); };
  ExprP row_plus_lane = binary(BinOp::Add, binary(BinOp::Mul, idx("i"), index_imm(64)), idx("l"));
  EXPECT_EQ(coefficient_of(*row_plus_lane, "l"), 1);
  EXPECT_EQ(coefficient_of(*row_plus_lane, "i"), 64);
  EXPECT_EQ(coefficient_of(*binary(BinOp::Mul, idx("l"), index_imm(3)), "l"), 3);
  EXPECT_EQ(coefficient_of(*binary(BinOp::Sub, idx("i"), idx("l")), "l"), -1);
  EXPECT_EQ(coefficient_of(*cast(ScalarType::I32, idx("l")), "l"), 1);
  EXPECT_EQ(coefficient_of(*idx("i"), "l"), 0);
  EXPECT_FALSE(coefficient_of(*binary(BinOp::Div, idx("l"), index_imm(2)), "l"));
  EXPECT_FALSE(coefficient_of(*binary(BinOp::Mul, idx("l"), idx("i")), "l"));
  EXPECT_FALSE(coefficient_of(*load("x", ScalarType::I32, {idx("l")}), "l"));
}

TEST(LoopIr, PrintsReadably) {
  ExprP i = var("i", ScalarType::Index);
  StmtP loop = make_for(
      "i", index_imm(0), index_imm(8),
      make_store("y", {i},
                 binary(BinOp::Max, load("x", ScalarType::F32, {i}), float_imm(ScalarType::F32, 0))));
  StmtP body = make_allocate("t", ScalarType::F32, 8, MemoryScope::Stack,
                             make_declare("acc", ScalarType::I32, int_imm(ScalarType::I32, 0), loop));
  EXPECT_EQ(to_string(*body),
            "allocate t: f32[8] in stack\n"
            "var acc: i32 = 0:i32\n"
            "for i in [0, +8) {\n"
            "  y[i] = max(x[i], 0.0:f32)\n"
            "}\n");
}

}  // namespace
}  // namespace ekb::lir
