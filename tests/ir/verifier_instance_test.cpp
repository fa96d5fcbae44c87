// instantiate: bindings, lets and shapes, input domains, expression types, index bounds.
#include <gtest/gtest.h>

#include "ir/instance.h"
#include "verify_test_util.h"

namespace ekb::ir {
namespace {

using vtest::at;
using vtest::check;
using vtest::has_error;
using vtest::only_error;
using vtest::pat;

const std::string kIo = "  params N\n  input  x : f32[N] in [-1, 1]\n  output y : f32[N]\n";

// ---- bindings ----
TEST(Instantiate, BindingsMustMatchParamsAndTypes) {
  std::string src = pat("  types T\n  params N, M\n  input x : T[N, M]\n  output y : T[N, M]\n  y[i, j] = x[i, j]",
                        "workload w { N = 8, MM = 3, T = 4, N = 2, M = f32 }");
  auto c = check(src);
  EXPECT_TRUE(has_error(c, at(src, "MM"), "workload 'w' binds 'MM', which is not a param or type of nn.t",
                        "did you mean 'M'?"));
  EXPECT_TRUE(has_error(c, at(src, "T = 4"), "type parameter 'T' needs a type such as f32, found 4"));
  EXPECT_TRUE(has_error(c, at(src, "N = 2"), "'N' is bound twice in workload 'w'"));
  EXPECT_TRUE(has_error(c, at(src, "M = f32"), "param 'M' needs an integer, found 'f32'"));
  EXPECT_EQ(c.items.size(), 4u) << c.text;
}

TEST(Instantiate, MissingBindingsAndUnknownTypes) {
  std::string src = pat("  types T, U\n" + kIo + "  y[i] = x[i] * cast(f32, cast(U, 1))",
                        "workload w { T = f33 }");
  auto c = check(src);
  EXPECT_TRUE(has_error(c, at(src, "workload w"), "workload 'w' does not bind param 'N'"));
  EXPECT_TRUE(has_error(c, at(src, "workload w"), "workload 'w' does not bind type 'U'", "add U = f32"));
  EXPECT_TRUE(has_error(c, at(src, "T = f33"), "unknown type 'f33' for 'T'", "did you mean 'f32'?"));
}

TEST(Instantiate, BindingErrorsAreReportedEvenWhenThePatternHasErrors) {
  std::string src = pat(kIo + "  y[i] = x[i] + zz", "workload w { N = 8, Q = 1 }");
  auto c = check(src);
  EXPECT_TRUE(has_error(c, at(src, "zz"), "unknown name 'zz'"));
  EXPECT_TRUE(has_error(c, at(src, "Q = 1"), "workload 'w' binds 'Q'"));
}

// ---- lets and shapes ----
TEST(Instantiate, LetsUseFloorDivisionAndWrap) {
  std::string src = pat("  params N\n  let A = -7 / 2\n  let B = -7 % 2\n  let C = 7 % -2\n  let D = 1 / 4.0\n"
                        "  let E = cast(i8, 200)\n  let F = N * A\n  input x : f32[N]\n  output y : f32[N]\n"
                        "  y[i] = x[i] * D");
  Module m = parse_module(src, "t.ekb");
  Diagnostics d("t.ekb");
  auto inst = instantiate(m, m.workloads[0], d);
  ASSERT_TRUE(inst) << d.format();
  EXPECT_EQ(inst->lets.at("A").int_value, -4);
  EXPECT_EQ(inst->lets.at("B").int_value, 1);
  EXPECT_EQ(inst->lets.at("C").int_value, -1);
  EXPECT_TRUE(inst->lets.at("D").is_float);
  EXPECT_DOUBLE_EQ(inst->lets.at("D").float_value, 0.25);
  EXPECT_EQ(inst->lets.at("E").int_value, -56);
  EXPECT_EQ(inst->lets.at("F").int_value, -32);
  EXPECT_FALSE(inst->lets.at("F").is_float);
  // The float let adopts y's element type in the statement.
  const Expr& mul = *m.pattern.stmts[0].value;
  EXPECT_EQ(inst->type_of(*mul.args[1]), ScalarType::F32);
}

TEST(Instantiate, LetDivisionByZero) {
  std::string src = pat("  params N\n  let A = N / (N - 8)\n  input x : f32[N]\n  output y : f32[N]\n  y[i] = x[i]");
  EXPECT_TRUE(only_error(check(src), at(src, "/ (N"), "division by zero in let 'A'", "workload 'w' (line 10)"));
}

TEST(Instantiate, ExtentsArePositive) {
  std::string src = pat("  params N\n  input x : f32[N]\n  output y : f32[N, N - 8]\n  y[i, j] = x[i]");
  EXPECT_TRUE(only_error(check(src), at(src, "N - 8"), "extent 1 of 'y' is 0; extents must be positive"));
  src = pat("  params N\n  input x : f32[N]\n  output y : f32[N, 2.5]\n  y[i, j] = x[i]");
  EXPECT_TRUE(only_error(check(src), at(src, "2.5"), "extent 1 of 'y' must be an integer, found a float constant"));
  src = pat("  params N\n  input x : f32[N]\n  output y : f32[N, N * N, N * N]\n  y[i, j, k] = x[i]",
            "workload w { N = 100000000 }");
  EXPECT_TRUE(has_error(check(src), at(src, "y :"), "'y' has too many elements"));
}

// ---- input domains ----
TEST(Instantiate, InputDomains) {
  std::string src = pat("  params N\n  input x : f32[N] in [4, -4]\n  output y : f32[N]\n  y[i] = x[i]");
  EXPECT_TRUE(only_error(check(src), at(src, "x :"), "the domain of 'x' is empty: [4, -4]"));
  src = pat("  params N\n  input x : u8[N] in [0, 300]\n  output y : u8[N]\n  y[i] = x[i]");
  EXPECT_TRUE(only_error(check(src), at(src, "x :"), "the domain of 'x' [0, 300] exceeds the range of u8, [0, 255]"));
  src = pat("  params N\n  input x : i32[N] in [0, 0.5]\n  output y : i32[N]\n  y[i] = x[i]");
  EXPECT_TRUE(only_error(check(src), at(src, "0.5"), "the domain's upper bound of 'x' must be an integer, found a float constant"));
  src = pat("  params N\n  input x : f32[N] in [-N, N - 1]\n  output y : f32[N]\n  y[i] = x[i]");
  EXPECT_TRUE(check(src).ok);
}

TEST(Instantiate, SpdNeedsSquareFloatMatrices) {
  std::string src = pat("  params N\n  input A : f32[N, 3] spd\n  output y : f32[N]\n  y[i] = A[i, 0]");
  EXPECT_TRUE(only_error(check(src), at(src, "A :"), "'spd' needs a float input whose last two extents are equal; 'A' is f32[8, 3]"));
  src = pat("  params N\n  input A : i32[N, N] spd\n  output y : i32[N]\n  y[i] = A[i, 0]");
  EXPECT_TRUE(only_error(check(src), at(src, "A :"), "'A' is i32[8, 8]"));
  // A batch of matrices over the last two axes.
  EXPECT_TRUE(check(pat("  params N\n  input A : f64[3, N, N] spd\n  output y : f64[N]\n  y[i] = A[0, i, i]")).ok);
  src = pat("  params N\n  input A : f32[N] spd\n  output y : f32[N]\n  y[i] = A[i]");
  EXPECT_TRUE(only_error(check(src), at(src, "A :"), "'A' is f32[8]"));
  // A batch of matrices over the last two axes.
  EXPECT_TRUE(check(pat("  params N\n  input A : f64[3, N, N] spd\n  output y : f64[N]\n  y[i] = A[0, i, i]")).ok);
  src = pat("  params N\n  input A : f32[N] spd\n  output y : f32[N]\n  y[i] = A[i]");
  EXPECT_TRUE(only_error(check(src), at(src, "A :"), "'A' is f32[8]"));
}

// ---- types ----
const std::string kMixed =
    "  params N\n  input x : f32[N] in [-1, 1]\n  input a : i8[N]\n  input n : i32[N] in [0, 7]\n"
    "  output y : f32[N]\n  output z : i32[N]\n";

struct TypeCase {
  std::string stmt;    // defines y or z (the other output gets a trivial definition)
  std::string needle;  // where the error is
  std::string message;
};

TEST(Instantiate, TypeErrors) {
  const std::vector<TypeCase> cases = {
      {"z[i] = cast(i32, a[i]) + n[i] + cast(i32, a[i] + n[i])", "+ n[i])", "cannot mix i8 and i32 in '+'"},
      {"y[i] = x[i] + n[i]", "+ n", "cannot mix f32 and i32 in '+'"},
      {"z[i] = n[i] * 0.5", "* 0.5", "cannot mix a float constant and i32 in '*'"},
      {"y[i] = select(x[i], 1.0, 2.0)", "x[i], 1.0", "the condition of 'select' must be bool, found f32"},
      {"y[i] = x[x[i]]", "x[i]]", "index 0 of 'x' must be an integer, found f32"},
      {"y[i] = x[i] % 2.0", "% 2.0", "'%' needs integer operands, found f32"},
      {"z[i] = n[i] << 1.5", "<< 1.5", "cannot mix a float constant and i32 in '<<'"},
      {"y[i] = select(!x[i], 1.0, 2.0)", "!x", "'!' needs a bool operand, found f32"},
      {"y[i] = select((x[i] > 0.0) + true, 1.0, 2.0)", "+ true", "'+' cannot be applied to bool"},
      {"y[i] = select(x[i] > 0.0 && 1, 1.0, 2.0)", "&& 1", "'&&' needs bool operands, found an integer literal"},
      {"y[i] = exp(n[i])", "exp", "'exp' needs float arguments, found i32"},
      {"y[i] = cast(f32, floor(n[i]))", "floor", "'floor' needs float arguments, found i32"},
      {"z[i] = rdmulh(cast(i32, a[i]), a[i])", "rdmulh", "'rdmulh' needs i32 arguments, found i8 as argument 2"},
      {"z[i] = x[i]", "x[i]\n", "the value assigned to 'z' must be i32, found f32"},
      {"z[i] = 0.5", "0.5", "the value assigned to 'z' must be i32, found a float constant"},
      {"z[i] = n[i] + i", "n[i] + i", "the value assigned to 'z' must be i32, found index"},
      {"y[i] = sum(k in 0..N: x[k] > 0.0)", "sum", "the body of 'sum' is bool; reductions need numbers"},
      {"z[i] = cast(i32, argmax(k in 0..N: x[k] > 0.0))", "argmax", "the body of 'argmax' is bool"},
      {"z[i] = cast(i32, a[i] + 300)", "300", "integer literal 300 does not fit in i8"},
      {"y[i] = pad(x, 1)[i] + pad(x, n[0])[i]", "n[0]", "the pad value of 'x' must be f32, found i32"},
      {"z[i] = min(n[i], true)", "min", "cannot mix i32 and bool in 'min'"},
      {"y[i] = x[i] * sum(k in 0..2.5: 1.0)", "2.5", "the end of range 'k' must be an integer, found a float constant"},
  };
  for (const auto& tc : cases) {
    bool defines_y = tc.stmt[0] == 'y';
    std::string src = pat(kMixed + "  " + tc.stmt + "\n  " +
                          (defines_y ? "z[i] = n[i] + cast(i32, a[i]) + cast(i32, x[i])"
                                     : "y[i] = x[i] + cast(f32, a[i] + a[i]) + cast(f32, n[i])"));
    auto c = check(src);
    EXPECT_TRUE(only_error(c, at(src, tc.needle), tc.message)) << tc.stmt;
  }
}

TEST(Instantiate, LiteralsAdoptTheirContext) {
  std::string src = pat(kMixed + "  temp b : bool[N]\n  y[i] = max(x[i] * 2 + 0.5, 0.0) / 3\n"
                        "  z[i] = n[i] * 2 + cast(i32, i % 3)\n  b[i] = x[i] > 0.0 || 1 < 2.5\n"
                        "  for i in 0..N: z[i] = z[i] + select(b[i], 1, 0) + cast(i32, a[i] & 7)");
  Module m = parse_module(src, "t.ekb");
  Diagnostics d("t.ekb");
  auto inst = instantiate(m, m.workloads[0], d);
  ASSERT_TRUE(inst) << d.format();
  const auto& st = m.pattern.stmts;
  const Expr& div = *st[0].value;           // max(...) / 3
  EXPECT_EQ(inst->type_of(div), ScalarType::F32);
  EXPECT_EQ(inst->type_of(*div.args[1]), ScalarType::F32);  // 3
  const Expr& mx = *div.args[0];
  EXPECT_EQ(inst->type_of(*mx.args[1]), ScalarType::F32);   // 0.0
  const Expr& add = *mx.args[0];                            // x[i] * 2 + 0.5
  EXPECT_EQ(inst->type_of(*add.args[1]), ScalarType::F32);
  EXPECT_EQ(inst->type_of(*add.args[0]->args[1]), ScalarType::F32);  // 2
  const Expr& zadd = *st[1].value;  // n[i] * 2 + cast(i32, i % 3)
  EXPECT_EQ(inst->type_of(*zadd.args[0]->args[1]), ScalarType::I32);
  EXPECT_EQ(inst->type_of(*zadd.args[1]->args[0]), ScalarType::Index);  // i % 3
  const Expr& cmp = *st[2].value->args[1];  // 1 < 2.5: both default to f64
  EXPECT_EQ(inst->type_of(cmp), ScalarType::Bool);
  EXPECT_EQ(inst->type_of(*cmp.args[0]), ScalarType::F64);
  const Expr& upd = *st[3].body[0].value;  // z[i] + select(b[i], 1, 0) + cast(i32, a[i] & 7)
  const Expr& sel = *upd.args[0]->args[1];
  EXPECT_EQ(inst->type_of(sel), ScalarType::I32);
  EXPECT_EQ(inst->type_of(*sel.args[1]), ScalarType::I32);
  EXPECT_EQ(inst->type_of(*upd.args[1]->args[0]->args[1]), ScalarType::I8);  // 7 in a[i] & 7
}

TEST(Instantiate, IndexValuesFitI64Tensors) {
  std::string src = pat("  params N\n  input x : f32[N]\n  output k : i64[1]\n  output c : i32[1]\n"
                        "  k[o] = argmax(i in 0..N: x[i])\n  c[o] = cast(i32, argmin(i in 0..N: x[i]))");
  EXPECT_TRUE(check(src).ok) << check(src).text;
}

// ---- index bounds ----
TEST(Bounds, OffsetReadIsReportedWithItsInterval) {
  std::string src = pat(kIo + "  y[i] = x[i + 1]", "workload w { N = 64 }");
  EXPECT_TRUE(only_error(check(src), at(src, "x[i + 1]"),
                         "index 0 of 'x' may be out of bounds: [1, 64] not within [0, 63]", "edge(x)"));
  src = pat("  params N\n  input x : f32[2, 3, N]\n  output y : f32[2, 3, N]\n  y[a, b, c] = x[a, b, c - 1]",
            "workload w { N = 64 }");
  EXPECT_TRUE(only_error(check(src), at(src, "x[a"),
                         "index 2 of 'x' may be out of bounds: [-1, 62] not within [0, 63]",
                         "with workload 'w' (line 9)"));
}

TEST(Bounds, BoundariesAndClampsAreInBounds) {
  std::string src = pat(kIo + "  y[i] = pad(x, 0.0)[i + 1] + edge(x)[i - 1] + mirror(x)[i + 5] + "
                              "x[clamp(i + 1, 0, N - 1)] + x[min(i + 1, N - 1)] + x[max(i - 1, 0)] + "
                              "x[(i + 7) / 2] + x[i % 8 * 8] + x[(i * 3) % N] + x[i >> 1] + x[N - 1 - i]",
                        "workload w { N = 64 }");
  auto c = check(src);
  EXPECT_TRUE(c.ok) << c.text;
}

TEST(Bounds, DataDependentIndicesUseTheInputDomain) {
  std::string body = "  params N\n  input x : f32[64]\n  input idx : i32[N] in [0, 63]\n  output y : f32[N]\n";
  EXPECT_TRUE(check(pat(body + "  y[i] = x[idx[i]]")).ok);
  std::string src = pat("  params N\n  input x : f32[64]\n  input idx : i32[N] in [0, 64]\n  output y : f32[N]\n"
                        "  y[i] = x[idx[i]]");
  EXPECT_TRUE(only_error(check(src), at(src, "x[idx"), "[0, 64] not within [0, 63]"));
  src = pat("  params N\n  input x : f32[64]\n  input idx : i32[N]\n  output y : f32[N]\n  y[i] = x[idx[i]]");
  EXPECT_TRUE(only_error(check(src), at(src, "x[idx"), "[-2147483648, 2147483647] not within [0, 63]"));
  // A u8 element indexes a 256-entry table without a declared domain.
  EXPECT_TRUE(check(pat("  params N\n  input t : f32[256]\n  input p : u8[N]\n  output y : f32[N]\n"
                        "  y[i] = t[p[i]]")).ok);
  // Temps have no domain: their type's range.
  src = pat(kIo + "  temp j : i32[N]\n  j[i] = cast(i32, i)\n  y[i] = x[j[i]] + x[clamp(j[i], 0, N - 1)]");
  EXPECT_TRUE(only_error(check(src), at(src, "x[j"), "index 0 of 'x' may be out of bounds"));
}

TEST(Bounds, TriangularRangesKeepTheirRelations) {
  std::string src = pat(kIo + "  y[i] = x[i]\n  for i in 0..N {\n    for j in 1..i: y[i] = y[i] + x[i - j]\n"
                              "    for j in 0..i: y[i] = y[i] + y[i - j - 1] * x[j]\n  }\n"
                              "  for i in 0..N, j in i + 1..N: y[j] = y[j] - y[i] * x[j - i - 1]",
                        "workload w { N = 16 }");
  EXPECT_TRUE(check(src).ok) << check(src).text;
  src = pat(kIo + "  y[i] = x[i]\n  for i in 0..N, j in 0..i + 1: y[i] = y[i] + x[i - j - 1]");
  EXPECT_TRUE(only_error(check(src), at(src, "x[i - j - 1]"), "[-1, 6] not within [0, 7]"));
}

TEST(Bounds, WritesAreChecked) {
  std::string src = pat(kIo + "  y[i] = x[i]\n  for i in 0..N: y[i + 1] = 0.0", "workload w { N = 64 }");
  EXPECT_TRUE(only_error(check(src), at(src, "y[i + 1]"), "index 0 of 'y' may be out of bounds: [1, 64]",
                         "a write must stay in bounds"));
}

TEST(Bounds, EmptyRangesAreSkipped) {
  std::string src = pat(kIo + "  y[i] = x[i]\n  for i in N..N: y[i + 100] = x[i + 100]\n"
                              "  for i in 0..N - 8: y[i - 1] = 0.0\n  y[i] = y[i] + sum(k in 0..0: x[k + 99])");
  EXPECT_TRUE(check(src).ok) << check(src).text;
}

TEST(Bounds, ShiftAmountsDivisorsAndArgmaxRanges) {
  std::string io = "  params N\n  input n : i32[N] in [0, 40]\n  input s : i32[N] in [-40, 0]\n  output z : i32[N]\n";
  std::string src = pat(io + "  z[i] = (n[i] << 20) + (n[i] >> cast(i32, i)) + rshift(n[i], n[i]) + requant(n[i], n[i], s[i])",
                        "workload w { N = 64 }");
  auto c = check(src);
  EXPECT_TRUE(has_error(c, at(src, "rshift"), "the exponent of 'rshift' may be outside [0, 31]: [0, 40]"));
  EXPECT_TRUE(has_error(c, at(src, "requant"), "the shift of 'requant' may be outside [-31, 31]: [-40, 0]"));
  EXPECT_EQ(c.items.size(), 2u) << c.text;  // << 20 and >> [0, 63] are fine
  src = pat(io + "  z[i] = (n[i] << cast(i32, i)) + s[i]", "workload w { N = 65 }");
  EXPECT_TRUE(only_error(check(src), at(src, "<<"), "the shift amount may be outside [0, 63]: [0, 64]"));
  src = pat(io + "  z[i] = n[i] / (s[i] - s[i] + cast(i32, N - N)) + n[i] / s[i] + n[i] % cast(i32, N - 64)",
            "workload w { N = 64 }");
  c = check(src);
  EXPECT_TRUE(has_error(c, at(src, "% cast"), "division by zero"));
  EXPECT_EQ(c.items.size(), 1u) << c.text;  // divisors that may be zero are the reference's business
  src = pat(io + "  output k : i64[N]\n  k[i] = argmax(j in 0..i: n[j])\n  z[i] = n[i] + s[i]\n"
            "  for i in 1..N: k[i] = argmin(j in 0..i: n[j])");
  EXPECT_TRUE(only_error(check(src), at(src, "argmax"), "the range of 'argmax' may be empty"));
}

TEST(Bounds, FloatIndexComputations) {
  // Bilinear taps: floor of a float coordinate, cast, then clamped.
  std::string src = pat("  params N, M\n  let s = cast(f64, N) / cast(f64, M)\n  input x : f32[N]\n  output y : f32[M]\n"
                        "  y[o] = x[clamp(cast(i32, floor((cast(f32, o) + 0.5) * s - 0.5)), 0, N - 1)]"
                        " + x[cast(i32, floor(cast(f32, o) * s))] + x[cast(i32, floor((cast(f32, o) + 0.5) * s - 0.5))]",
                        "workload w { N = 10, M = 20 }");
  auto c = check(src);
  // Only the unclamped half-pixel tap can leave the image (floor(-0.25) = -1).
  EXPECT_TRUE(only_error(c, at(src, "x[cast(i32, floor((cast"), "index 0 of 'x' may be out of bounds: [-1, 9]"));
}

}  // namespace
}  // namespace ekb::ir
