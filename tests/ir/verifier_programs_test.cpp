// Whole programs: typical kernels verify cleanly and get the expected types; and no input the
// parser accepts (mutated programs, nesting at the parser's limit, extreme values) crashes or
// hangs the verifier.
#include <gtest/gtest.h>

#include <functional>
#include <random>

#include "ir/instance.h"
#include "verify_test_util.h"

namespace ekb::ir {
namespace {

const char* kSoftmax = R"(pattern nn.softmax {
  level operator
  source "TFLite SOFTMAX"
  types T
  params R, C
  input  x : T[R, C] in [-8, 8]
  output y : T[R, C]
  temp   m : T[R]
  temp   s : T[R]
  m[r] = max(c in 0..C: x[r, c])
  s[r] = sum(c in 0..C: exp(x[r, c] - m[r]))
  y[r, c] = exp(x[r, c] - m[r]) / s[r]
}
workload kws micro { R = 1, C = 12, T = f32 }
workload half mobile { R = 512, C = 128, T = f16 }
)";

const char* kConv2d = R"(pattern nn.conv2d {
  level operator
  source "TFLite CONV_2D"
  types T
  params N, H, W, C, K, KH, KW, SH, SW, PT, PB, PL, PR
  let OH = (H + PT + PB - KH) / SH + 1
  let OW = (W + PL + PR - KW) / SW + 1
  input  x : T[N, H, W, C]    in [-1, 1]
  input  w : T[K, KH, KW, C]  in [-0.5, 0.5]
  input  b : T[K]             in [-0.1, 0.1]
  output y : T[N, OH, OW, K]
  y[n, oh, ow, k] = b[k] + sum(kh in 0..KH, kw in 0..KW, c in 0..C:
                               pad(x, 0.0)[n, oh * SH + kh - PT, ow * SW + kw - PL, c] * w[k, kh, kw, c])
}
workload kws micro { N = 1, H = 49, W = 10, C = 1, K = 64, KH = 10, KW = 4, SH = 2, SW = 2, PT = 4, PB = 5, PL = 1, PR = 1, T = f32 }
workload s2 mobile { N = 1, H = 32, W = 32, C = 16, K = 32, KH = 3, KW = 3, SH = 2, SW = 2, PT = 0, PB = 1, PL = 0, PR = 1, T = f16 }
)";

// Direct Form I biquad, one section, zero initial state: the recurrence reads y[n - 1], y[n - 2].
const char* kBiquad = R"(pattern audio.biquad {
  level operator
  source "CMSIS-DSP arm_biquad_cascade_df1_f32"
  types T
  params N
  input  x : T[N] in [-1, 1]
  input  c : T[5] in [-0.5, 0.5]
  output y : T[N]
  y[n] = 0.0
  for n in 0..N:
    y[n] = c[0] * x[n] + c[1] * pad(x, 0.0)[n - 1] + c[2] * pad(x, 0.0)[n - 2]
         - c[3] * pad(y, 0.0)[n - 1] - c[4] * pad(y, 0.0)[n - 2]
}
workload block micro { N = 256, T = f32 }
)";

const char* kCholesky = R"(pattern linalg.cholesky {
  level operator
  source "PolyBench/C 4.2 cholesky"
  types T
  params N
  input  A_in : T[N, N] spd
  output A    : T[N, N]
  A[i, j] = A_in[i, j]
  for i in 0..N {
    for j in 0..i {
      for k in 0..j: A[i, j] = A[i, j] - A[i, k] * A[j, k]
      A[i, j] = A[i, j] / A[j, j]
    }
    for k in 0..i: A[i, i] = A[i, i] - A[i, k] * A[i, k]
    A[i, i] = sqrt(A[i, i])
  }
}
workload small micro { N = 32, T = f32 }
workload large mobile { N = 120, T = f64 }
)";

const char* kHistogram = R"(pattern img.histogram {
  level operator
  source "OpenCV calcHist"
  params H, W
  input  img  : u8[H, W] in [0, 255]
  output hist : i32[256]
  hist[b] = 0
  for y in 0..H, x in 0..W: hist[img[y, x]] = hist[img[y, x]] + 1
}
workload vga mobile { H = 480, W = 640 }
)";

const char* kResize = R"(pattern img.resize_bilinear {
  level operator
  source "OpenCV resize INTER_LINEAR"
  types T
  params H, W, OH, OW
  let sy = cast(f64, H) / cast(f64, OH)
  let sx = cast(f64, W) / cast(f64, OW)
  input  src : T[H, W] in [0, 255]
  output dst : T[OH, OW]
  dst[oy, ox] =
      (1 - (sy * (cast(T, oy) + 0.5) - 0.5 - floor(sy * (cast(T, oy) + 0.5) - 0.5)))
        * src[clamp(cast(i32, floor(sy * (cast(T, oy) + 0.5) - 0.5)), 0, H - 1),
              clamp(cast(i32, floor(sx * (cast(T, ox) + 0.5) - 0.5)), 0, W - 1)]
    + (sy * (cast(T, oy) + 0.5) - 0.5 - floor(sy * (cast(T, oy) + 0.5) - 0.5))
        * src[clamp(cast(i32, floor(sy * (cast(T, oy) + 0.5) - 0.5)) + 1, 0, H - 1),
              clamp(cast(i32, floor(sx * (cast(T, ox) + 0.5) - 0.5)), 0, W - 1)]
}
workload up micro { H = 60, W = 80, OH = 120, OW = 160, T = f32 }
workload down mobile { H = 480, W = 640, OH = 224, OW = 224, T = f32 }
)";

void visit(const Expr* e, const std::function<void(const Expr&)>& f) {
  if (!e) return;
  f(*e);
  for (const auto& a : e->args) visit(a.get(), f);
  visit(e->pad_value.get(), f);
  for (const auto& r : e->ranges) {
    visit(r.lo.get(), f);
    visit(r.hi.get(), f);
  }
}

void visit(const Stmt& s, const std::function<void(const Expr&)>& f) {
  for (const auto& r : s.ranges) {
    visit(r.lo.get(), f);
    visit(r.hi.get(), f);
  }
  for (const auto& b : s.body) visit(b, f);
  for (const auto& i : s.indices) visit(i.get(), f);
  visit(s.value.get(), f);
}

// Every expression node of the pattern, in a fixed order.
std::vector<const Expr*> all_exprs(const Pattern& p) {
  std::vector<const Expr*> out;
  auto add = [&](const Expr& e) { out.push_back(&e); };
  for (const auto& l : p.lets) visit(l.value.get(), add);
  for (const auto& t : p.tensors) {
    for (const auto& d : t.shape) visit(d.get(), add);
    visit(t.domain.lo.get(), add);
    visit(t.domain.hi.get(), add);
  }
  for (const auto& s : p.stmts) visit(s, add);
  return out;
}

struct Verified {
  Module m;
  std::vector<Instance> insts;
};

// verify_module must pass; every workload instantiates and types every expression node.
Verified verified(const char* text) {
  Verified v{parse_module(text, "t.ekb"), {}};
  Diagnostics d("t.ekb");
  EXPECT_TRUE(verify_module(v.m, d)) << d.format();
  for (const auto& w : v.m.workloads) {
    auto inst = instantiate(v.m, w, d);
    EXPECT_TRUE(inst) << d.format();
    if (!inst) continue;
    for (const Expr* e : all_exprs(v.m.pattern))
      EXPECT_TRUE(inst->expr_types.count(e)) << "untyped node at " << e->loc.line << ":" << e->loc.col;
    v.insts.push_back(std::move(*inst));
  }
  return v;
}

TEST(Programs, Softmax) {
  Verified v = verified(kSoftmax);
  ASSERT_EQ(v.insts.size(), 2u);
  const Expr& y = *v.m.pattern.stmts[2].value;
  EXPECT_EQ(v.insts[0].type_of(y), ScalarType::F32);
  EXPECT_EQ(v.insts[1].type_of(y), ScalarType::F16);
  EXPECT_EQ(v.insts[1].type_of(*y.args[0]), ScalarType::F16);  // exp(...)
  EXPECT_EQ(v.insts[1].type_of(*v.m.pattern.stmts[0].value), ScalarType::F16);  // max reduction
  EXPECT_EQ(v.insts[1].tensor("y")->shape, (std::vector<int64_t>{512, 128}));
  EXPECT_EQ(v.insts[1].full_name(), "nn.softmax/half");
}

TEST(Programs, Conv2dWithPad) {
  Verified v = verified(kConv2d);
  ASSERT_EQ(v.insts.size(), 2u);
  EXPECT_EQ(v.insts[0].tensor("y")->shape, (std::vector<int64_t>{1, 25, 5, 64}));
  EXPECT_EQ(v.insts[1].tensor("y")->shape, (std::vector<int64_t>{1, 16, 16, 32}));
  EXPECT_EQ(v.insts[0].lets.at("OH").int_value, 25);
  // The pad value adopts the element type.
  const Expr* pad = nullptr;
  visit(v.m.pattern.stmts[0], [&](const Expr& e) {
    if (e.kind == ExprKind::Access && e.boundary == Boundary::Pad) pad = &e;
  });
  ASSERT_TRUE(pad);
  EXPECT_EQ(v.insts[1].type_of(*pad->pad_value), ScalarType::F16);
  EXPECT_EQ(v.insts[1].type_of(*pad->args[1]), ScalarType::Index);
}

TEST(Programs, BiquadRecurrence) {
  Verified v = verified(kBiquad);
  ASSERT_EQ(v.insts.size(), 1u);
  EXPECT_EQ(v.insts[0].type_of(*v.m.pattern.stmts[0].value), ScalarType::F32);  // y[n] = 0.0
}

TEST(Programs, CholeskyTriangularWithSpdInput) {
  Verified v = verified(kCholesky);
  ASSERT_EQ(v.insts.size(), 2u);
  const Stmt& outer = v.m.pattern.stmts[1];
  const Expr& sq = *outer.body[2].value;  // sqrt(A[i, i])
  EXPECT_EQ(v.insts[0].type_of(sq), ScalarType::F32);
  EXPECT_EQ(v.insts[1].type_of(sq), ScalarType::F64);
}

TEST(Programs, HistogramDataDependentIndex) {
  Verified v = verified(kHistogram);
  ASSERT_EQ(v.insts.size(), 1u);
  const auto& st = v.m.pattern.stmts;
  EXPECT_EQ(v.insts[0].type_of(*st[0].value), ScalarType::I32);                   // hist[b] = 0
  EXPECT_EQ(v.insts[0].type_of(*st[1].body[0].value->args[1]), ScalarType::I32);  // + 1
  EXPECT_EQ(v.insts[0].type_of(*st[1].body[0].indices[0]), ScalarType::U8);       // img[y, x]
  // Without the declared domain the u8 range [0, 255] still fits 256 bins; 255 bins do not.
  std::string small = kHistogram;
  small.replace(small.find("i32[256]"), 8, "i32[255]");
  auto c = vtest::check(small);
  EXPECT_TRUE(vtest::has_error(c, vtest::at(small, "hist[img"), "index 0 of 'hist' may be out of bounds: [0, 255] not within [0, 254]",
                               "a write must stay in bounds"));
}

TEST(Programs, BilinearResizeFloorAndClamp) {
  Verified v = verified(kResize);
  ASSERT_EQ(v.insts.size(), 2u);
  const Expr* floor_call = nullptr;
  const Expr* cast_i32 = nullptr;
  const Expr* clamp_call = nullptr;
  const Expr* half = nullptr;
  visit(v.m.pattern.stmts[0], [&](const Expr& e) {
    if (e.kind == ExprKind::Call && e.name == "floor" && !floor_call) floor_call = &e;
    if (e.kind == ExprKind::Call && e.name == "clamp" && !clamp_call) clamp_call = &e;
    if (e.kind == ExprKind::Cast && e.cast_type.name == "i32" && !cast_i32) cast_i32 = &e;
    if (e.kind == ExprKind::FloatLit && e.float_value == 0.5 && !half) half = &e;
  });
  ASSERT_TRUE(floor_call && cast_i32 && clamp_call && half);
  EXPECT_EQ(v.insts[0].type_of(*floor_call), ScalarType::F32);
  EXPECT_EQ(v.insts[0].type_of(*cast_i32), ScalarType::I32);
  EXPECT_EQ(v.insts[0].type_of(*clamp_call), ScalarType::Index);  // i32 mixed with H - 1
  EXPECT_EQ(v.insts[0].type_of(*half), ScalarType::F32);
  EXPECT_TRUE(v.insts[0].lets.at("sy").is_float);
  EXPECT_DOUBLE_EQ(v.insts[0].lets.at("sy").float_value, 0.5);
}

// ---- robustness ----

// Runs the whole verifier on text; parse errors are fine, crashes and hangs are not.
bool verify_text(const std::string& text) {
  Module m;
  try {
    m = parse_module(text, "fuzz.ekb");
  } catch (const ParseError&) {
    return false;
  }
  Diagnostics d("fuzz.ekb");
  verify_module(m, d);
  for (const auto& w : m.workloads) instantiate(m, w, d);
  return true;
}

TEST(Robustness, MutatedProgramsNeverCrash) {
  std::string kScheduled = std::string(kSoftmax) +
                           "schedule cpu {\n  split(y, c, 8, co, ci)\n  vectorize(y, ci, 8)\n  compute_at(m, y, r)\n}\n"
                           "memory gpu {\n  cache_read(x, y, r, shared, xs)\n  layout(x, pack(1, 4))\n}\n";
  const std::vector<std::string> seeds = {kSoftmax, kConv2d, kBiquad, kCholesky, kHistogram, kResize, kScheduled};
  const std::vector<std::string> tokens = {
      "i",   "j",    "N",     "0",    "1",   "-1",   "2.5",  "inf",   "nan",  "+",       "-",      "*",
      "/",   "%",    "<<",    ">>",   "&",   "==",   "<",    "&&",    "!",    "(",       ")",      "[",
      "]",   ",",    "..",    ":",    "{",   "}",    "=",    "x",     "y",    "T",       "f32",    "i8",
      "u8",  "bool", "sum(",  "max(", "argmax(", "for ", "in ", "cast(", "sat(", "select(", "pad(x, 0)",
      "edge(x)", "exp(", "clamp(", "rdmulh(", "true", "9223372036854775807", "-9223372036854775807",
      " k in 0..N: ", "temp t : T[N]\n", "let L = N / 0\n", "workload z { N = 0 }\n", "split(C, i, 0, a, b)"};
  std::mt19937 rng(12345);
  int parsed = 0;
  for (const auto& seed : seeds) {
    for (int iter = 0; iter < 3000; ++iter) {
      std::string s = seed;
      int edits = 1 + static_cast<int>(rng() % 3);
      for (int e = 0; e < edits; ++e) {
        size_t pos = rng() % (s.size() + 1);
        size_t len = 1 + rng() % 8;
        switch (rng() % 4) {
          case 0: s.erase(pos, len); break;
          case 1: s.insert(pos, tokens[rng() % tokens.size()]); break;
          case 2: s.insert(pos, s.substr(pos, len)); break;
          default:
            if (pos < s.size()) s.replace(pos, 1, tokens[rng() % tokens.size()]);
        }
      }
      parsed += verify_text(s);
    }
  }
  EXPECT_GT(parsed, 1000);  // the mutations reach the verifier, not just the parser
}

TEST(Robustness, NestingAtTheParsersLimit) {
  auto wrap = [](const std::string& body) {
    return vtest::pat("  params N\n  input x : f32[N] in [-1, 1]\n  output y : f32[N]\n" + body);
  };
  const int d = 190;
  std::string parens(d, '(');
  parens += "x[i]" + std::string(d, ')');
  EXPECT_TRUE(verify_text(wrap("  y[i] = " + parens)));
  std::string chain = "x[i]";
  for (int k = 0; k < d; ++k) chain += " + x[i]";
  EXPECT_TRUE(verify_text(wrap("  y[i] = " + chain)));
  std::string negs(d, '-');
  EXPECT_TRUE(verify_text(wrap("  y[i] = " + negs + "x[i]")));
  std::string sums, close;
  for (int k = 0; k < 60; ++k) {
    sums += "sum(k" + std::to_string(k) + " in 0..2: ";
    close += ")";
  }
  EXPECT_TRUE(verify_text(wrap("  y[i] = " + sums + "x[i]" + close)));
  std::string fors = "  y[i] = x[i]\n";
  for (int k = 0; k < 60; ++k) fors += "  for v" + std::to_string(k) + " in 0..2:\n";
  fors += "  y[i] = y[i] + 1.0";
  EXPECT_TRUE(verify_text(wrap(fors)));
  // Past the limit the parser refuses; a chain of operators counts too.
  chain = "x[i]";
  for (int k = 0; k < 5000; ++k) chain += " + x[i]";
  EXPECT_FALSE(verify_text(wrap("  y[i] = " + chain)));
}

TEST(Robustness, ExtremeValues) {
  const std::string io = "  params N\n  input x : f32[N] in [-1, 1]\n  output y : f32[N]\n";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {io + "  let A = N << 70\n  y[i] = x[i]", "workload w { N = 8 }"},
      {io + "  let A = (-9223372036854775807 - 1) / -1\n  let B = A % -1\n  y[i] = x[i]", "workload w { N = 8 }"},
      {io + "  y[i] = x[i]", "workload w { N = 9223372036854775807 }"},
      {io + "  y[i] = x[i]", "workload w { N = -9223372036854775807 }"},
      {io + "  y[i] = x[i * N * N * N] + x[i / (i - 3)] + x[(i << 62) >> 61] + x[i % 0]", "workload w { N = 3037000500 }"},
      {io + "  y[i] = x[cast(i32, x[i] * inf)] + x[cast(i64, nan)] + x[cast(i8, 1e300)]", "workload w { N = 8 }"},
      {io + "  y[i] = x[i] + cast(f32, rdmulh(-2147483648, -2147483648) + requant(1, 2, 40))", "workload w { N = 8 }"},
      {"  params N\n  input x : i64[N] in [-9223372036854775807, 9223372036854775807]\n  output y : f32[N]\n"
       "  y[i] = pad(x, 0)[x[i] + x[i]] + cast(f32, sum(k in x[i]..x[i]: k))", "workload w { N = 8 }"},
      {io + "  let A = 1e308 * 1e308 - 1e308 * 1e308\n  y[i] = x[i] + A", "workload w { N = 8 }"},
  };
  for (const auto& [body, wl] : cases) EXPECT_TRUE(verify_text(vtest::pat(body, wl))) << body;
}

}  // namespace
}  // namespace ekb::ir
