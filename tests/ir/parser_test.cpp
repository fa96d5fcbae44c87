// Parser and printer: round trips, literal and precedence edge cases, the malformed-file corpus.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "ir/instance.h"
#include "ir/parser.h"
#include "ir/printer.h"

namespace ekb::ir {
namespace {

Module parse(const std::string& text) { return parse_module(text, "test.ekb"); }

// parse -> print -> parse is the identity, and printing is idempotent.
void expect_round_trip(const std::string& text) {
  Module a = parse(text);
  std::string printed = print_module(a);
  Module b = parse(printed);
  EXPECT_TRUE(equal(a, b)) << "printed:\n" << printed;
  EXPECT_EQ(printed, print_module(b));
}

const char* kSoftmax = R"(
pattern nn.softmax {
  level operator
  source "TFLite SOFTMAX"
  summary "Row softmax: \"stable\" form"
  types T
  params R, C
  let eps = 1e-5
  input  x : T[R, C] in [-4, 4]
  output y : T[R, C]
  temp   m : T[R]
  temp   s : T[R]
  m[r] = max(c in 0..C: x[r, c])
  s[r] = sum(c in 0..C: exp(x[r, c] - m[r]))
  y[r, c] = exp(x[r, c] - m[r]) / (s[r] + eps)
}
workload a micro { R = 1, C = 12, T = f32 }
workload b mobile heldout { R = 128, C = 512, T = f16 }
)";

TEST(Parser, SoftmaxStructure) {
  Module m = parse(kSoftmax);
  EXPECT_EQ(m.pattern.name, "nn.softmax");
  EXPECT_EQ(m.pattern.domain(), "nn");
  EXPECT_EQ(m.pattern.summary, "Row softmax: \"stable\" form");
  ASSERT_EQ(m.pattern.tensors.size(), 4u);
  EXPECT_EQ(m.pattern.tensors[0].domain.kind, DomainKind::Range);
  ASSERT_EQ(m.pattern.stmts.size(), 3u);
  EXPECT_EQ(m.pattern.stmts[0].value->kind, ExprKind::Reduce);
  EXPECT_EQ(m.pattern.stmts[0].value->reduce_op, ReduceOp::Max);
  ASSERT_EQ(m.workloads.size(), 2u);
  EXPECT_TRUE(m.workloads[1].has_tag("heldout"));
  EXPECT_EQ(m.workloads[1].find_binding("T")->type_name, "f16");
  expect_round_trip(kSoftmax);
}

TEST(Parser, MinMaxAreFunctionsOrReductions) {
  Module m = parse(R"(pattern nn.t {
  input x : f32[4]
  output y : f32[4]
  y[i] = max(x[i], min(k in 0..4: x[k]))
})");
  const Expr& v = *m.pattern.stmts[0].value;
  EXPECT_EQ(v.kind, ExprKind::Call);
  EXPECT_EQ(v.name, "max");
  EXPECT_EQ(v.args[1]->kind, ExprKind::Reduce);
}

TEST(Parser, PrecedenceAndAssociativity) {
  auto expr_of = [](const std::string& e) {
    Module m = parse("pattern nn.t {\n input x : f32[4]\n output y : f32[4]\n y[i] = " + e + "\n}");
    return print_expr(*m.pattern.stmts[0].value);
  };
  EXPECT_EQ(expr_of("1 + 2 * 3"), "1 + 2 * 3");
  EXPECT_EQ(expr_of("(1 + 2) * 3"), "(1 + 2) * 3");
  EXPECT_EQ(expr_of("1 - (2 - 3)"), "1 - (2 - 3)");
  EXPECT_EQ(expr_of("(1 - 2) - 3"), "1 - 2 - 3");
  EXPECT_EQ(expr_of("a < b && c || !d"), "a < b && c || !d");
  EXPECT_EQ(expr_of("-(a + b)"), "-(a + b)");
  EXPECT_EQ(expr_of("- -a"), "- -a");
  EXPECT_EQ(expr_of("a - -1"), "a - -1");
  EXPECT_EQ(expr_of("x >> 2 & 3"), "x >> 2 & 3");
  EXPECT_EQ(expr_of("(x & 3) << 1"), "(x & 3) << 1");
}

TEST(Parser, LiteralsRoundTrip) {
  for (const char* lit : {"0.1", "1e-05", "1e+300", "-0.0", "inf", "-inf", "nan", "3.0", "0.30000000000000004",
                          "-9223372036854775807", "2.5e-324"}) {
    std::string text = std::string("pattern nn.t {\n let c = ") + lit + "\n}";
    expect_round_trip(text);
  }
  Module m = parse("pattern nn.t {\n let c = 0.1\n let d = 1e3\n let e = 2\n}");
  EXPECT_EQ(m.pattern.lets[0].value->float_value, 0.1);
  EXPECT_EQ(m.pattern.lets[1].value->kind, ExprKind::FloatLit);
  EXPECT_EQ(m.pattern.lets[2].value->kind, ExprKind::IntLit);
  EXPECT_EQ(print_float(1.0), "1.0");
  EXPECT_EQ(print_float(1e21), "1e+21");
}

TEST(Parser, RangesAreNotFloats) {
  Module m = parse("pattern linalg.t {\n input a : f32[4]\n output y : f32[1]\n y[z] = sum(k in 0..4: a[k])\n}");
  const Range& r = m.pattern.stmts[0].value->ranges[0];
  EXPECT_EQ(r.lo->kind, ExprKind::IntLit);
  EXPECT_EQ(r.hi->int_value, 4);
}

TEST(Parser, RecurrencesBoundariesCastsAndLayers) {
  expect_round_trip(R"(# comment before the pattern
pattern audio.biquad {
  level operator
  source "CMSIS-DSP arm_biquad_cascade_df1_f32"
  params N
  let b0 = 0.2
  input x : f32[N] in [-1, 1]
  input coef : f32[5]
  output y : f32[N]
  temp z : i32[N]
  y[n] = 0.0
  z[n] = sat(i32, cast(i64, edge(x)[n - 1] * 100.0)) >> 2
  for n in 2..N: y[n] = b0 * x[n] + pad(x, 0.0)[n - 1] - coef[3] * y[n - 1] - mirror(x)[n + 1]
  for t in 0..3 {
    for n in 1..N {
      y[n] = select(y[n] > 0.0, y[n], -y[n])
      y[n] = y[n] + cast(f32, argmax(k in 0..n: x[k]))
    }
    y[0] = fma(y[0], 2.0, 1.0)
  }
}
workload w micro { N = 16 }
schedule cpu {
  split(y, n, 8, no, ni, tail=guard)
  vectorize(y, ni, 8)
  compute_at(z, y, no)
  split(y.update(0), n, 4, a, b)
  bind(y, no, block.x)
}
memory gpu {
  cache_read(x, y, no, shared, xs)
  layout(coef, pack(0, 8))
  layout(x, order(0))
  align(x, 64)
  double_buffer(xs)
}
)");
}

// Each file in tests/data/malformed starts with "# expect: LINE:COL: MESSAGE"; the parser (or,
// for files that parse, the verifier) must report exactly that as its first diagnostic.
TEST(Parser, MalformedCorpus) {
  namespace fs = std::filesystem;
  int checked = 0;
  for (const auto& entry : fs::directory_iterator(EKB_TEST_DATA_DIR "/malformed")) {
    std::ifstream in(entry.path());
    std::stringstream ss;
    ss << in.rdbuf();
    std::string text = ss.str();
    std::string first_line = text.substr(0, text.find('\n'));
    ASSERT_EQ(first_line.rfind("# expect: ", 0), 0u) << entry.path();
    std::string expected = first_line.substr(10);
    std::string file = entry.path().filename().string();
    try {
      Module m = parse_module(text, file);
      Diagnostics diags(file);
      EXPECT_FALSE(verify_module(m, diags)) << file << " parses and verifies";
      if (!diags.has_errors()) continue;
      const Diagnostic& d = diags.items().front();
      EXPECT_EQ(std::to_string(d.loc.line) + ":" + std::to_string(d.loc.col) + ": " + d.message, expected)
          << "in " << file;
      ++checked;
    } catch (const ParseError& e) {
      const Diagnostic& d = e.diagnostic();
      std::string got = std::to_string(d.loc.line) + ":" + std::to_string(d.loc.col) + ": " + d.message;
      EXPECT_EQ(got, expected) << "in " << file;
      EXPECT_EQ(d.file, file);
      ++checked;
    }
  }
  EXPECT_GE(checked, 20);
}

TEST(Parser, BinaryAndHostileInputs) {
  std::string binary("\x7f" "ELF\x02\x01\x01\x00\x00\x00", 10);
  try {
    parse(binary);
    FAIL() << "binary input parsed";
  } catch (const ParseError& e) {
    EXPECT_EQ(e.diagnostic().loc.line, 1);
    EXPECT_NE(e.diagnostic().message.find("unexpected character 0x7f"), std::string::npos);
    EXPECT_NE(e.diagnostic().hint.find("text file"), std::string::npos);
  }
  std::string deep = "pattern nn.t {\n let c = " + std::string(5000, '(') + "1" + std::string(5000, ')') + "\n}";
  EXPECT_THROW(parse(deep), ParseError);
  std::string deep_neg = "pattern nn.t {\n let c = " + std::string(5000, '!') + "1\n}";
  EXPECT_THROW(parse(deep_neg), ParseError);
  std::string deep_for = "pattern nn.t {\n input x : f32[1]\n output y : f32[1]\n";
  for (int i = 0; i < 1000; ++i) deep_for += "for i" + std::to_string(i) + " in 0..1: ";
  deep_for += "y[0] = 1.0\n}";
  EXPECT_THROW(parse(deep_for), ParseError);
}

}  // namespace
}  // namespace ekb::ir
