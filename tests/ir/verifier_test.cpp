// verify_pattern: header, names and scopes, definitions and their order, reductions. Each error
// class is checked for its message and its exact line:col.
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

TEST(VerifyPattern, MinimalProgramIsClean) {
  auto c = check(pat(kIo + "  y[i] = x[i] * 2.0"));
  EXPECT_TRUE(c.ok) << c.text;
}

// ---- header ----
TEST(VerifyPattern, UnknownDomain) {
  std::string src = "pattern nnn.t {\n  level operator\n  source \"s\"\n" + kIo + "  y[i] = x[i]\n}\n";
  auto c = check(src);
  EXPECT_TRUE(only_error(c, {1, 1}, "unknown domain 'nnn' in pattern name 'nnn.t'", "did you mean 'nn'?"));
}

TEST(VerifyPattern, LevelAndSourceAreMandatory) {
  auto c = check("pattern img.t {\n" + kIo + "  y[i] = x[i]\n}\n");
  EXPECT_TRUE(has_error(c, {1, 1}, "pattern 'img.t' has no 'level'"));
  EXPECT_TRUE(has_error(c, {1, 1}, "pattern 'img.t' has no 'source'", "provenance is mandatory"));
  EXPECT_EQ(c.items.size(), 2u) << c.text;
}

// ---- names ----
TEST(VerifyPattern, DuplicateNamesAcrossKinds) {
  std::string src = pat("  types T\n  params N, T\n  let N = 3\n  input x : f32[N]\n  output y : f32[N]\n"
                        "  temp x : f32[N]\n  y[i] = x[i]");
  auto c = check(src);
  EXPECT_TRUE(has_error(c, at(src, "T\n  let"), "'T' is already declared as a type parameter at line 4"));
  EXPECT_TRUE(has_error(c, at(src, "N = 3"), "'N' is already declared as a param at line 5"));
  EXPECT_TRUE(has_error(c, at(src, "x : f32[N]\n  y[i]"), "'x' is already declared as an input at line 7"));
}

TEST(VerifyPattern, TypeParameterNamedLikeABuiltinType) {
  std::string src = pat("  types f32\n" + kIo + "  y[i] = x[i]");
  EXPECT_TRUE(has_error(check(src), at(src, "f32\n"), "type parameter 'f32' has the name of a built-in type"));
}

TEST(VerifyPattern, IndexVariableShadowsParamOrTensor) {
  std::string src = pat(kIo + "  y[N] = x[0]");
  // A param in a pure definition's index position is a constant, not a variable.
  EXPECT_TRUE(has_error(check(src), at(src, "y[N]"),
                        "the first write to 'y' must be its pure definition, but index 0 ('N') is a param"));
  src = pat(kIo + "  y[x] = 1.0");
  EXPECT_TRUE(has_error(check(src), at(src, "x] ="), "index variable 'x' shadows the input 'x' declared at line 5",
                        "rename the variable"));
  src = pat(kIo + "  y[i] = sum(N in 0..4: x[i])");
  EXPECT_TRUE(has_error(check(src), at(src, "N in"), "index variable 'N' shadows the param 'N' declared at line 4"));
}

TEST(VerifyPattern, NestedRangeRebindsVariable) {
  std::string src = pat(kIo + "  y[i] = 0.0\n  for i in 0..N, j in 0..N {\n    for j in 0..N: y[i] = y[i] + x[j]\n  }");
  auto c = check(src);
  EXPECT_TRUE(only_error(c, at(src, "j in 0..N: y"), "index variable 'j' is already bound at line 8"));
  src = pat(kIo + "  y[i] = sum(i in 0..N: x[i])");
  EXPECT_TRUE(has_error(check(src), at(src, "i in 0..N"), "index variable 'i' is already bound at line 7"));
}

TEST(VerifyPattern, UnknownNameSuggestsNearest) {
  std::string src = pat("  params R, C\n  input x : f32[R, C]\n  output y : f32[R, C]\n  y[row, col] = x[row, coll]",
                        "workload w { R = 2, C = 3 }");
  EXPECT_TRUE(only_error(check(src), at(src, "coll"), "unknown name 'coll'", "did you mean 'col'?"));
}

TEST(VerifyPattern, TensorOrTypeUsedAsValue) {
  std::string src = pat("  types T\n" + kIo + "  y[i] = x + cast(f32, T)", "workload w { N = 8, T = f32 }");
  auto c = check(src);
  EXPECT_TRUE(has_error(c, at(src, "x +"), "'x' is a tensor; read an element with x[...]"));
  EXPECT_TRUE(has_error(c, at(src, "T)"), "'T' is a type, not a value"));
}

TEST(VerifyPattern, LetsUseParamsAndEarlierLetsOnly) {
  std::string src = pat("  params N\n  let A = B + 1\n  let B = N * 2\n  let C = x[0]\n  let D = i\n"
                        "  input x : f32[N]\n  output y : f32[N]\n  y[i] = x[i]");
  auto c = check(src);
  EXPECT_TRUE(has_error(c, at(src, "B + 1"), "let 'A' uses 'B', which is not declared before it"));
  EXPECT_TRUE(has_error(c, at(src, "x[0]"), "'x' cannot be read in let 'C'"));
  EXPECT_TRUE(has_error(c, at(src, "i\n"), "unknown name 'i'", "let 'D' may use only params, lets and literals"));
}

TEST(VerifyPattern, ShapesAndDomainsAreConstant) {
  std::string src = pat("  params N\n  input x : f32[N] in [0, x[0]]\n  output y : f32[sum(k in 0..N: k)]\n"
                        "  y[i] = x[i]");
  auto c = check(src);
  EXPECT_TRUE(has_error(c, at(src, "x[0]"), "'x' cannot be read in the domain of 'x'"));
  EXPECT_TRUE(has_error(c, at(src, "sum("), "a reduction cannot appear in the shape of 'y'"));
}

TEST(VerifyPattern, AccessNeedsDeclaredTensorAndRank) {
  std::string src = pat(kIo + "  y[i] = x[i, 0] + xx[i] + N[i]");
  auto c = check(src);
  EXPECT_TRUE(has_error(c, at(src, "x[i, 0]"), "'x' has 1 dimension but is read with 2 indices"));
  EXPECT_TRUE(has_error(c, at(src, "xx[i]"), "unknown tensor 'xx'", "did you mean 'x'?"));
  EXPECT_TRUE(has_error(c, at(src, "N[i]"), "'N' is a param, not a tensor"));
  src = pat(kIo + "  y[i, j] = x[i]");
  EXPECT_TRUE(has_error(check(src), at(src, "y[i, j]"), "'y' has 1 dimension but 2 indices are written"));
}

TEST(VerifyPattern, CallsNeedKnownIntrinsicAndArity) {
  std::string src = pat(kIo + "  y[i] = expp(x[i]) + clamp(x[i], 0.0) + min(x[i]) + select(true, 1.0)");
  auto c = check(src);
  EXPECT_TRUE(has_error(c, at(src, "expp"), "unknown function 'expp'", "did you mean 'exp'?"));
  EXPECT_TRUE(has_error(c, at(src, "clamp"), "'clamp' takes 3 arguments, found 2"));
  EXPECT_TRUE(has_error(c, at(src, "min("), "'min' takes 2 arguments, found 1", "min(k in 0..K: ...)"));
  EXPECT_TRUE(has_error(c, at(src, "select"), "'select' takes 3 arguments, found 2"));
}

TEST(VerifyPattern, CastTypesAreScalarOrTypeParameter) {
  std::string src = pat("  types T\n" + kIo + "  y[i] = cast(f33, x[i]) + cast(index, 1) + cast(T, 1)",
                        "workload w { N = 8, T = f32 }");
  auto c = check(src);
  EXPECT_TRUE(has_error(c, at(src, "f33"), "unknown type 'f33'", "did you mean 'f32'?"));
  EXPECT_TRUE(has_error(c, at(src, "index"), "unknown type 'index'", "use i64"));
  EXPECT_EQ(c.items.size(), 2u) << c.text;
  src = pat("  params N\n  input x : flot[N]\n  output y : f32[N]\n  y[i] = 0.0 * cast(f32, x[i])");
  EXPECT_TRUE(has_error(check(src), at(src, "flot"), "unknown type 'flot'", "declare it with `types flot`"));
}

// ---- definitions ----
TEST(VerifyPattern, InputsAreNeverAssigned) {
  std::string src = pat(kIo + "  y[i] = x[i]\n  for i in 0..N: x[i] = 0.0");
  EXPECT_TRUE(only_error(check(src), at(src, "x[i] = 0.0"), "input 'x' cannot be assigned"));
}

TEST(VerifyPattern, ReadBeforePureDefinition) {
  std::string src = pat(kIo + "  temp t : f32[N]\n  y[i] = t[i]\n  t[i] = x[i]");
  EXPECT_TRUE(only_error(check(src), at(src, "t[i]\n"), "'t' is read before its pure definition",
                         "its pure definition is at line 9"));
}

TEST(VerifyPattern, ReadInOwnPureDefinition) {
  std::string src = pat(kIo + "  y[i] = x[i] + y[i]");
  EXPECT_TRUE(only_error(check(src), at(src, "y[i]", 1), "'y' is read in its own pure definition"));
  // Reads in updates are how recurrences are written.
  EXPECT_TRUE(check(pat(kIo + "  y[i] = x[i]\n  for i in 1..N: y[i] = y[i] + y[i - 1]")).ok);
}

TEST(VerifyPattern, FirstWriteMustBeAPureDefinition) {
  std::string src = pat(kIo + "  y[i + 0] = x[i]");
  EXPECT_TRUE(has_error(check(src), at(src, "y[i + 0]"), "the first write to 'y' must be its pure definition, "
                                                          "but index 0 is not a plain variable"));
  src = pat("  params N\n  input x : f32[N, N]\n  output y : f32[N, N]\n  y[i, i] = x[i, i]");
  EXPECT_TRUE(has_error(check(src), at(src, "y[i, i]"), "index variable 'i' is used twice"));
  src = pat(kIo + "  for i in 0..N: y[i] = x[i]");
  EXPECT_TRUE(only_error(check(src), at(src, "y[i] ="), "the first write to 'y' is inside a 'for'"));
}

TEST(VerifyPattern, EveryOutputAndTempIsDefinedAndUsed) {
  std::string src = pat(kIo + "  input b : f32[N]\n  output z : f32[N]\n  temp t : f32[N]\n  temp u : f32[N]\n"
                        "  y[i] = x[i]\n  u[i] = x[i]");
  auto c = check(src);
  EXPECT_TRUE(has_error(c, at(src, "b :"), "input 'b' is never read", "remove it"));
  EXPECT_TRUE(has_error(c, at(src, "z :"), "output 'z' has no pure definition"));
  EXPECT_TRUE(has_error(c, at(src, "t :"), "temp 't' is never used", "remove it"));
  EXPECT_TRUE(has_error(c, at(src, "u :"), "temp 'u' is never read", "remove it"));
  EXPECT_EQ(c.items.size(), 4u) << c.text;
}

TEST(VerifyPattern, UpdateFreeVariables) {
  // c is free: it ranges over y's second dimension.
  std::string body = "  params T, C\n  input x : f32[T, C]\n  output y : f32[T, C]\n  y[t, c] = x[t, c]\n";
  std::string wl = "workload w { T = 4, C = 3 }";
  EXPECT_TRUE(check(pat(body + "  for t in 1..T: y[t, c] = y[t - 1, c] + x[t, c]", wl)).ok);
  std::string src = pat(body + "  for t in 1..T: y[t, c + 1] = x[t, c]", wl);
  auto c = check(src);
  EXPECT_TRUE(has_error(c, at(src, "c + 1"), "unknown name 'c'", "a free index variable must be a whole index"));
  src = pat("  params N\n  input x : f32[N, N]\n  output y : f32[N, N]\n  y[i, j] = x[i, j]\n  y[k, k] = 0.0");
  EXPECT_TRUE(only_error(check(src), at(src, "k] = 0.0"), "free index variable 'k' appears twice"));
}

// ---- reductions ----
TEST(VerifyPattern, ArgmaxTakesOneRange) {
  std::string src = pat("  params N\n  input x : f32[N, N]\n  output y : i64[1]\n"
                        "  y[o] = argmax(i in 0..N, j in 0..N: x[i, j])");
  EXPECT_TRUE(only_error(check(src), at(src, "argmax"), "'argmax' takes exactly one range, found 2"));
}

TEST(VerifyPattern, ReductionVariablesAreOnlyVisibleInTheBody) {
  std::string src = pat(kIo + "  y[i] = sum(k in 0..N: x[k]) + x[k]");
  EXPECT_TRUE(only_error(check(src), at(src, "k]\n"), "unknown name 'k'"));
  // Later ranges may use earlier ones (triangular domains).
  EXPECT_TRUE(check(pat(kIo + "  y[i] = sum(j in 0..N, k in 0..j + 1: x[k])")).ok);
}

TEST(VerifyPattern, ErrorsAreReportedOncePerLocation) {
  // Two workloads, one pattern error: verify_module reports it once.
  std::string src = pat(kIo + "  y[i] = x[i] + zz", "workload a { N = 8 }\nworkload b { N = 9 }");
  auto c = check(src);
  EXPECT_TRUE(only_error(c, at(src, "zz"), "unknown name 'zz'"));
}

TEST(VerifyPattern, InstantiateReportsPatternErrors) {
  std::string src = pat(kIo + "  y[i] = x[i] + zz");
  Module m = parse_module(src, "t.ekb");
  Diagnostics d("t.ekb");
  EXPECT_FALSE(instantiate(m, m.workloads[0], d).has_value());
  ASSERT_EQ(d.items().size(), 1u);
  EXPECT_EQ(d.items()[0].message, "unknown name 'zz'");
}

TEST(VerifyPattern, NeedsNoWorkload) {
  std::string src = "pattern nn.t {\n  level operator\n  source \"s\"\n" + kIo + "  y[i] = x[i + 1]\n}\n";
  Module m = parse_module(src, "t.ekb");
  Diagnostics d("t.ekb");
  verify_pattern(m, d);  // bounds need a workload: none are checked here
  EXPECT_FALSE(d.has_errors()) << d.format();
  EXPECT_TRUE(verify_module(m, d));
}

TEST(VerifyModule, DuplicateWorkloadNames) {
  std::string src = pat(kIo + "  y[i] = x[i]", "workload a { N = 8 }\nworkload a { N = 9 }");
  EXPECT_TRUE(only_error(check(src), at(src, "workload a", 1), "workload 'a' is declared twice (first at line 9)"));
}

TEST(VerifyModule, FormatCarriesFileLineAndColumn) {
  std::string src = pat(kIo + "  y[i] = x[i] + zz");
  auto c = check(src);
  SourceLoc loc = at(src, "zz");
  EXPECT_NE(c.text.find("t.ekb:" + std::to_string(loc.line) + ":" + std::to_string(loc.col) +
                        ": error: unknown name 'zz'"),
            std::string::npos)
      << c.text;
}

}  // namespace
}  // namespace ekb::ir
