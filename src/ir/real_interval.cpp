#include "ir/real_interval.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>

namespace ekb::ir {

namespace {
constexpr double kInf = std::numeric_limits<double>::infinity();

// 0 * inf is NaN in IEEE but 0 in interval terms: an unbounded end only stands for "large".
double mul_end(double a, double b) {
  if (a == 0 || b == 0) return 0;
  return a * b;
}

RealInterval from_corners(double a, double b, double c, double d) {
  if (std::isnan(a) || std::isnan(b) || std::isnan(c) || std::isnan(d)) return RealInterval::full();
  return {std::min({a, b, c, d}), std::max({a, b, c, d})};
}

// Real quotient bounds for a divisor interval that excludes zero.
RealInterval quotient(RealInterval a, RealInterval b) {
  return from_corners(a.lo / b.lo, a.lo / b.hi, a.hi / b.lo, a.hi / b.hi);
}

// Smallest 2^k - 1 that covers v >= 0 (the largest value an or/xor of values <= v can reach).
double ones_cover(double v) {
  double p = 1;
  while (p <= v && p < 0x1p63) p *= 2;
  return p - 1;
}
}  // namespace

RealInterval RealInterval::full() { return {-kInf, kInf}; }

RealInterval RealInterval::of_type(ScalarType t) {
  if (is_float(t)) return full();
  return {static_cast<double>(int_min(t)), static_cast<double>(int_max(t))};
}

RealInterval hull(RealInterval a, RealInterval b) { return {std::min(a.lo, b.lo), std::max(a.hi, b.hi)}; }
RealInterval intersect(RealInterval a, RealInterval b) { return {std::max(a.lo, b.lo), std::min(a.hi, b.hi)}; }

RealInterval neg(RealInterval a) { return {-a.hi, -a.lo}; }

RealInterval add(RealInterval a, RealInterval b) { return fix_nan({a.lo + b.lo, a.hi + b.hi}); }
RealInterval sub(RealInterval a, RealInterval b) { return fix_nan({a.lo - b.hi, a.hi - b.lo}); }

RealInterval mul(RealInterval a, RealInterval b) {
  return from_corners(mul_end(a.lo, b.lo), mul_end(a.lo, b.hi), mul_end(a.hi, b.lo),
                      mul_end(a.hi, b.hi));
}

RealInterval div_real(RealInterval a, RealInterval b) {
  if (b.lo <= 0 && b.hi >= 0) return RealInterval::full();
  return quotient(a, b);
}

RealInterval div_floor(RealInterval a, RealInterval b) {
  // Integer divisors are at least 1 away from zero; a zero divisor is an error in the reference,
  // so it contributes no value.
  bool have = false;
  RealInterval out{};
  auto part = [&](RealInterval d) {
    if (d.lo > d.hi) return;
    RealInterval q = quotient(a, d);
    q = {std::floor(q.lo), std::floor(q.hi)};
    out = have ? hull(out, q) : q;
    have = true;
  };
  part({std::max(b.lo, 1.0), b.hi});
  part({b.lo, std::min(b.hi, -1.0)});
  return have ? fix_nan(out) : RealInterval::full();
}

RealInterval mod_floor(RealInterval a, RealInterval b) {
  if (b.lo >= 1) {
    if (a.lo >= 0 && a.hi < b.lo) return a;  // already reduced
    return {0, b.hi - 1};
  }
  if (b.hi <= -1) {
    if (a.hi <= 0 && a.lo > b.hi) return a;
    return {b.lo + 1, 0};
  }
  return fix_nan({std::min(0.0, b.lo + 1), std::max(0.0, b.hi - 1)});
}

RealInterval shl(RealInterval a, RealInterval b) {
  if (b.lo < 0 || b.hi > 63) return RealInterval::full();
  // a * 2^n is monotone in a for fixed n and in n for fixed a: the corners bound it.
  double p = std::ldexp(1.0, static_cast<int>(b.lo)), q = std::ldexp(1.0, static_cast<int>(b.hi));
  return from_corners(mul_end(a.lo, p), mul_end(a.lo, q), mul_end(a.hi, p), mul_end(a.hi, q));
}

RealInterval shr(RealInterval a, RealInterval b) {
  if (b.lo < 0 || b.hi > 63) return RealInterval::full();
  double p = std::ldexp(1.0, static_cast<int>(b.lo)), q = std::ldexp(1.0, static_cast<int>(b.hi));
  return from_corners(std::floor(a.lo / p), std::floor(a.lo / q), std::floor(a.hi / p),
                      std::floor(a.hi / q));
}

RealInterval bit_and(RealInterval a, RealInterval b, ScalarType t) {
  // A non-negative operand bounds the result to [0, it].
  if (a.lo >= 0 && b.lo >= 0) return {0, std::min(a.hi, b.hi)};
  if (a.lo >= 0) return {0, a.hi};
  if (b.lo >= 0) return {0, b.hi};
  return RealInterval::of_type(t);
}

RealInterval bit_or(RealInterval a, RealInterval b, ScalarType t) {
  if (a.lo >= 0 && b.lo >= 0) return {0, ones_cover(std::max(a.hi, b.hi))};
  return RealInterval::of_type(t);
}

RealInterval min_iv(RealInterval a, RealInterval b) { return {std::min(a.lo, b.lo), std::min(a.hi, b.hi)}; }
RealInterval max_iv(RealInterval a, RealInterval b) { return {std::max(a.lo, b.lo), std::max(a.hi, b.hi)}; }

RealInterval abs_iv(RealInterval a) {
  if (a.lo >= 0) return a;
  if (a.hi <= 0) return neg(a);
  return {0, std::max(-a.lo, a.hi)};
}

RealInterval fix_nan(RealInterval a) {
  if (std::isnan(a.lo) || std::isnan(a.hi)) return RealInterval::full();
  return a;
}

RealInterval wrap_to(RealInterval a, ScalarType t) {
  if (is_float(t)) return a;
  RealInterval r = RealInterval::of_type(t);
  return a.within(r.lo, r.hi) ? a : r;
}

RealInterval saturate_to(RealInterval a, ScalarType t) {
  if (is_float(t)) return a;
  RealInterval r = RealInterval::of_type(t);
  a = fix_nan({std::trunc(a.lo), std::trunc(a.hi)});
  // A float source may be NaN, which converts to 0.
  return {std::clamp(a.lo, r.lo, r.hi), std::clamp(a.hi, r.lo, r.hi)};
}

std::string format_bound(double v) {
  if (std::isinf(v)) return v < 0 ? "-inf" : "inf";
  if (std::isnan(v)) return "nan";
  if (v == std::trunc(v)) {
    if (v >= 0x1p63) return std::to_string(std::numeric_limits<int64_t>::max());
    if (v <= -0x1p63) return std::to_string(std::numeric_limits<int64_t>::min());
    return std::to_string(static_cast<int64_t>(v));
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

std::string format_interval(RealInterval a) {
  return "[" + format_bound(a.lo) + ", " + format_bound(a.hi) + "]";
}

}  // namespace ekb::ir
