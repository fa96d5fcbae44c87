// simplify: folding with the IR's exact semantics, algebraic identities, bounds from loop ranges
// deciding checks and clamps, cheap division, no_wrap marking, trivial loops and lets.
#include "lir/simplify.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "lir/mutator.h"

namespace ekb::lir {
namespace {

ExprP I(int64_t v) { return index_imm(v); }
ExprP i32(int64_t v) { return int_imm(ScalarType::I32, v); }
ExprP V(const std::string& n, ScalarType t = ScalarType::Index) { return var(n, t); }
ExprP add(ExprP a, ExprP b) { return binary(BinOp::Add, a, b); }
ExprP sub(ExprP a, ExprP b) { return binary(BinOp::Sub, a, b); }
ExprP mul(ExprP a, ExprP b) { return binary(BinOp::Mul, a, b); }
std::string s(const ExprP& e) { return to_string(*simplify(e)); }

// The value stored by `loop(var in [0, n)) y[0] = e`, simplified with var's bounds.
std::string in_loop(const std::string& v, int64_t n, const ExprP& e) {
  StmtP st = simplify(make_for(v, I(0), I(n), make_store("y", {I(0)}, e)));
  std::string out;
  for_each_stmt(*st, [&](const Stmt& x) {
    if (x.kind == StmtKind::Store) out = to_string(*x.value);
  });
  return out;
}

TEST(Simplify, MinOrMaxLessOneOperandIsBoundedWithoutItsRange) {
  // A guarded tail's box extent, (min(lo, 6) - lo) + 1: at most 1 whatever lo is.
  ExprP extent = add(sub(binary(BinOp::Min, V("lo"), I(6)), V("lo")), I(1));
  EXPECT_EQ(s(extent), "(min(0, (6 - lo)) + 1)");
  EXPECT_EQ(value_range(extent, {}).hi, 1);
  EXPECT_EQ(s(sub(binary(BinOp::Max, I(2), V("x")), V("x"))), "max(0, (2 - x))");
  // Not on integers of a declared width, where y - x may wrap where min(x, y) - x does not.
  EXPECT_EQ(s(sub(binary(BinOp::Min, V("a", ScalarType::I32), i32(6)), V("a", ScalarType::I32))),
            "(min(a, 6:i32) - a)");
}

TEST(Simplify, FoldsWithExactIntegerSemantics) {
  EXPECT_EQ(s(add(i32(2147483647), i32(1))), "-2147483648:i32");  // wraps
  EXPECT_EQ(s(binary(BinOp::Div, i32(-7), i32(2))), "-4:i32");    // floor division
  EXPECT_EQ(s(binary(BinOp::Mod, i32(-7), i32(2))), "1:i32");     // floor modulo
  EXPECT_EQ(s(binary(BinOp::Shl, i32(1), i32(35))), "0:i32");     // the exact value, wrapped
  EXPECT_EQ(s(cast(ScalarType::I8, i32(300))), "44:i8");
  EXPECT_EQ(s(cast(ScalarType::I8, i32(300), true)), "127:i8");
  EXPECT_EQ(s(cast(ScalarType::I32, float_imm(ScalarType::F32, std::nan("")))), "0:i32");
  EXPECT_EQ(s(cast(ScalarType::I32, float_imm(ScalarType::F64, -3.9))), "-3:i32");
}

TEST(Simplify, FoldsFloatsInTheirType) {
  EXPECT_EQ(s(add(float_imm(ScalarType::F32, 0.1), float_imm(ScalarType::F32, 0.2))),
            "0.30000001192092896:f32");
  EXPECT_EQ(s(call(Intrinsic::Rsqrt, ScalarType::F64, {float_imm(ScalarType::F64, 4)})), "0.5:f64");
  EXPECT_EQ(s(binary(BinOp::Max, float_imm(ScalarType::F32, 1), float_imm(ScalarType::F32, std::nan("")))),
            "nan:f32");
  ExprP x = load("x", ScalarType::F32, {I(0)});
  EXPECT_EQ(s(mul(x, float_imm(ScalarType::F32, 1))), "x[0]");
  // x + 0.0 is not x when x is -0.0: kept.
  EXPECT_EQ(s(add(x, float_imm(ScalarType::F32, 0))), "(x[0] + 0.0:f32)");
}

TEST(Simplify, AlgebraicIdentities) {
  ExprP x = load("x", ScalarType::Index, {I(0)}), y = load("y", ScalarType::Index, {I(0)});
  EXPECT_EQ(s(add(x, I(0))), "x[0]");
  EXPECT_EQ(s(mul(I(1), x)), "x[0]");
  EXPECT_EQ(s(mul(x, I(0))), "0");
  EXPECT_EQ(s(add(add(x, I(3)), I(4))), "(x[0] + 7)");
  EXPECT_EQ(s(sub(add(x, I(3)), I(3))), "x[0]");
  EXPECT_EQ(s(add(x, sub(y, x))), "y[0]");  // a loop's end: min + (hi - min)
  EXPECT_EQ(s(sub(x, x)), "0");
  EXPECT_EQ(s(sub(add(mul(x, I(4)), I(3)), mul(x, I(4)))), "3");  // a box's extent: (lo + 3) - lo
  EXPECT_EQ(s(sub(add(x, y), x)), "y[0]");
  EXPECT_EQ(s(mul(mul(x, I(4)), I(3))), "(x[0] * 12)");
}

TEST(Simplify, DivisionByConstantsBecomesCheap) {
  ExprP x = load("x", ScalarType::I32, {I(0)});
  EXPECT_EQ(s(binary(BinOp::Div, x, i32(8))), "(x[0] >> 3:i32)");  // floor division by 2^k
  EXPECT_EQ(s(binary(BinOp::Mod, x, i32(8))), "(x[0] & 7:i32)");   // floor modulo by 2^k
  EXPECT_EQ(s(binary(BinOp::Div, x, i32(3))), "(x[0] / 3:i32)");   // may be negative: floor stays
  ExprP i = V("i");
  EXPECT_EQ(in_loop("i", 100, binary(BinOp::Div, i, I(3))), "truncdiv(i, 3)");  // i >= 0
  EXPECT_EQ(in_loop("i", 100, binary(BinOp::Mod, add(i, I(1)), I(3))), "truncmod((i + 1), 3)");
  EXPECT_EQ(in_loop("i", 3, binary(BinOp::Mod, i, I(3))), "i");
  EXPECT_EQ(in_loop("i", 3, binary(BinOp::Div, i, I(3))), "0");
}

TEST(Simplify, LoopBoundsDecideChecksAndClamps) {
  ExprP i = V("i");
  auto inside =
      binary(BinOp::And, binary(BinOp::Le, I(0), sub(i, I(1))), binary(BinOp::Lt, sub(i, I(1)), I(8)));
  ExprP x = load("x", ScalarType::F32, {sub(i, I(1))});
  EXPECT_EQ(in_loop("i", 8, select(inside, x, float_imm(ScalarType::F32, 0))),
            "select((0 <= (i + -1)), x[(i + -1)], 0.0:f32)");  // only the lower check can fail
  EXPECT_EQ(in_loop("i", 8, binary(BinOp::Min, binary(BinOp::Max, i, I(0)), I(7))), "i");  // edge clamp
  EXPECT_EQ(in_loop("i", 8, call(Intrinsic::MirrorIndex, ScalarType::Index, {i, I(8)})), "i");
  EXPECT_EQ(in_loop("i", 8, binary(BinOp::Lt, i, I(8))), "true");
}

TEST(Simplify, MarksArithmeticThatCannotWrap) {
  ExprP i = V("i");
  StmtP st = simplify(make_for(
      "i", I(0), I(1000),
      make_store("y", {i}, add(mul(cast(ScalarType::I32, i), i32(1000)), load("x", ScalarType::I32, {i})))));
  std::vector<std::pair<std::string, bool>> ops;
  for_each_expr(*st, [&](const Expr& e) {
    if (e.kind == ExprKind::Binary) ops.emplace_back(std::string(bin_op_text(e.bin_op)), e.no_wrap);
  });
  ASSERT_EQ(ops.size(), 2u);
  EXPECT_EQ(ops[0], std::make_pair(std::string("*"), true));   // i * 1000 < 2^31
  EXPECT_EQ(ops[1], std::make_pair(std::string("+"), false));  // + a loaded i32 may wrap
}

TEST(Simplify, TrivialLoopsAndConstantLets) {
  ExprP n = V("n");
  StmtP one = make_for("n", I(0), I(1), make_store("y", {add(n, I(2))}, float_imm(ScalarType::F32, 1)));
  EXPECT_EQ(to_string(*simplify(one)), "y[2] = 1.0:f32\n");
  StmtP none = make_for("n", I(0), sub(I(3), I(3)), make_store("y", {n}, float_imm(ScalarType::F32, 1)));
  EXPECT_TRUE(is_no_op(*simplify(none)));
  StmtP let = make_let("k", I(4), make_store("y", {mul(V("k"), I(2))}, float_imm(ScalarType::F32, 1)));
  EXPECT_EQ(to_string(*simplify(let)), "y[8] = 1.0:f32\n");
  // A loop of one iteration whose start reads memory binds it once instead of substituting.
  StmtP data =
      make_for("n", load("s", ScalarType::Index, {I(0)}), I(1), make_store("s", {I(0)}, add(n, I(1))));
  EXPECT_EQ(to_string(*simplify(data)), "let n: index = s[0]\ns[0] = (n + 1)\n");
}

TEST(Simplify, AccumulatorsAreNotConstant) {
  ExprP acc = V("acc", ScalarType::I32);
  StmtP st = make_declare("acc", ScalarType::I32, i32(0),
                          make_block({make_for("k", I(0), I(4), make_assign("acc", add(acc, i32(1)))),
                                      make_let("a", acc, make_store("y", {I(0)}, V("a", ScalarType::I32)))}));
  std::string out = to_string(*simplify(st));
  EXPECT_NE(out.find("let a: i32 = acc\n"), std::string::npos) << out;  // not replaced by 0
}

}  // namespace
}  // namespace ekb::lir
