// Reference values must not depend on the compiler's FMA contraction (clang contracts a * b + c
// by default on FMA targets); GCC in ISO mode (-std=c++20) does not contract.
#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#endif
#include "ir/inputs.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "ir/interpreter.h"

namespace ekb::ir {

uint64_t splitmix64_mix(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

Rng::Rng(uint64_t seed) {
  uint64_t x = seed;
  for (uint64_t& s : s_) {
    x += 0x9E3779B97F4A7C15ull;  // SplitMix64: increment, then mix
    s = splitmix64_mix(x);
  }
}

uint64_t Rng::next() {
  auto rotl = [](uint64_t v, int k) { return (v << k) | (v >> (64 - k)); };
  const uint64_t result = rotl(s_[1] * 5, 7) * 9;
  const uint64_t t = s_[1] << 17;
  s_[2] ^= s_[0];
  s_[3] ^= s_[1];
  s_[1] ^= s_[2];
  s_[0] ^= s_[3];
  s_[2] ^= t;
  s_[3] = rotl(s_[3], 45);
  return result;
}

double Rng::uniform01() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

namespace {
// High and low 64 bits of a 64x64-bit product.
inline uint64_t mul_hi_lo(uint64_t a, uint64_t b, uint64_t& lo) {
#if defined(__SIZEOF_INT128__)
  unsigned __int128 m = static_cast<unsigned __int128>(a) * b;
  lo = static_cast<uint64_t>(m);
  return static_cast<uint64_t>(m >> 64);
#else
  uint64_t a0 = a & 0xFFFFFFFFu, a1 = a >> 32, b0 = b & 0xFFFFFFFFu, b1 = b >> 32;
  uint64_t p00 = a0 * b0, p01 = a0 * b1, p10 = a1 * b0, p11 = a1 * b1;
  uint64_t mid = (p00 >> 32) + (p01 & 0xFFFFFFFFu) + (p10 & 0xFFFFFFFFu);
  lo = (mid << 32) | (p00 & 0xFFFFFFFFu);
  return p11 + (p01 >> 32) + (p10 >> 32) + (mid >> 32);
#endif
}
}  // namespace

// Lemire's multiply-shift with rejection ("Fast random integer generation in an interval", 2019):
// unbiased, and a division only in the rare rejection case.
int64_t Rng::uniform_int(int64_t lo, int64_t hi) {
  if (hi <= lo) return lo;
  uint64_t range = static_cast<uint64_t>(hi) - static_cast<uint64_t>(lo) + 1;  // 0: all 2^64
  if (range == 0) return static_cast<int64_t>(next());
  uint64_t low;
  uint64_t high = mul_hi_lo(next(), range, low);
  if (low < range) {
    uint64_t threshold = (0 - range) % range;  // 2^64 mod range
    while (low < threshold) high = mul_hi_lo(next(), range, low);
  }
  return static_cast<int64_t>(static_cast<uint64_t>(lo) + high);
}

uint64_t input_stream_seed(uint64_t seed, uint64_t input_index) {
  return splitmix64_mix(splitmix64_mix(seed) ^ (0xD1B54A32D192ED03ull * (input_index + 1)));
}

ValueRange input_value_range(const Instance& inst, const TensorInstance& t) {
  ValueRange d;
  ScalarType ty = t.type;
  const InputDomain& dom = t.decl->domain;
  std::string where = inst.full_name() + ": input '" + t.decl->name + "'";
  if (is_float(ty)) {
    d.is_float = true;
    if (dom.kind == DomainKind::Range) {
      d.flo = eval_constant(inst, *dom.lo).as_double();
      d.fhi = eval_constant(inst, *dom.hi).as_double();
    }
    if (!(d.flo <= d.fhi) || !std::isfinite(d.flo) || !std::isfinite(d.fhi))
      throw std::runtime_error(where + ": empty or infinite domain");
    double lo = round_to_type(ty, d.flo), hi = round_to_type(ty, d.fhi);
    if (lo < d.flo) lo = next_up(ty, lo);
    if (hi > d.fhi) hi = next_down(ty, hi);
    if (lo <= hi) {
      d.flo = lo;
      d.fhi = hi;
    } else {  // no value of the type inside: the nearest one
      d.flo = d.fhi = round_to_type(ty, d.flo);
    }
    return d;
  }
  int64_t tmin = ty == ScalarType::Bool ? 0 : int_min(ty);
  int64_t tmax = ty == ScalarType::Bool ? 1 : int_max(ty);
  if (dom.kind == DomainKind::Range) {
    LetValue lo = eval_constant(inst, *dom.lo), hi = eval_constant(inst, *dom.hi);
    double flo = lo.is_float ? std::ceil(lo.float_value) : 0;
    double fhi = hi.is_float ? std::floor(hi.float_value) : 0;
    d.ilo = lo.is_float ? (flo <= -9.2e18 ? tmin : static_cast<int64_t>(flo)) : lo.int_value;
    d.ihi = hi.is_float ? (fhi >= 9.2e18 ? tmax : static_cast<int64_t>(fhi)) : hi.int_value;
  } else if (ty == ScalarType::Bool) {
    d.ilo = 0;
    d.ihi = 1;
  } else if (ty == ScalarType::I8 || ty == ScalarType::U8) {
    d.ilo = tmin;
    d.ihi = tmax;
  } else {
    d.ilo = -1000;
    d.ihi = 1000;
  }
  d.ilo = std::max(d.ilo, tmin);
  d.ihi = std::min(d.ihi, tmax);
  if (d.ilo > d.ihi) throw std::runtime_error(where + ": empty domain");
  return d;
}

namespace {

void fill_uniform(TensorData& t, const ValueRange& d, Rng& rng) {
  if (d.is_float) {
    for (double& v : t.f) {
      double scaled = (d.fhi - d.flo) * rng.uniform01();
      double x = round_to_type(t.type, d.flo + scaled);
      if (x > d.fhi) x = d.fhi;  // ends are representable: nudging inward is clamping
      if (x < d.flo) x = d.flo;
      v = x;
    }
  } else {
    for (int64_t& v : t.i) v = rng.uniform_int(d.ilo, d.ihi);
  }
}

void fill_spd(TensorData& t, Rng& rng, const std::string& where) {
  size_t r = t.shape.size();
  if (r < 2 || t.shape[r - 1] != t.shape[r - 2] || !t.is_float())
    throw std::runtime_error(where + ": 'spd' needs a float tensor of shape [..., n, n]");
  int64_t n = t.shape[r - 1];
  int64_t batch = t.num_elements() / std::max<int64_t>(1, n * n);
  std::vector<double> b(static_cast<size_t>(n * n));
  for (int64_t m = 0; m < batch; ++m) {
    for (double& x : b) x = -1.0 + 2.0 * rng.uniform01();
    double* a = t.f.data() + m * n * n;
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j <= i; ++j) {
        double s = 0;
        for (int64_t k = 0; k < n; ++k) s += b[i * n + k] * b[j * n + k];
        double v = round_to_type(t.type, s / static_cast<double>(n) + (i == j ? 1.0 : 0.0));
        a[i * n + j] = v;
        a[j * n + i] = v;
      }
  }
}

bool degenerate(const TensorData& t, const ValueRange& d) {
  int64_t n = t.num_elements();
  if (n == 0) return false;
  bool has_nonzero = d.is_float ? (d.flo != 0 || d.fhi != 0) : (d.ilo != 0 || d.ihi != 0);
  bool has_two = d.is_float ? d.flo < d.fhi : d.ilo < d.ihi;
  bool all_equal = true, all_zero = true;
  const double first = t.as_double(0);
  for (int64_t k = 0; k < n && (all_equal || all_zero); ++k) {
    double v = t.as_double(k);
    if (v != 0) all_zero = false;
    if (v != first) all_equal = false;
  }
  return (all_zero && has_nonzero) || (n >= 2 && all_equal && has_two);
}

}  // namespace

std::vector<TensorData> generate_inputs(const Instance& inst, uint64_t seed) {
  std::vector<TensorData> out;
  uint64_t k = 0;
  for (const TensorInstance& ti : inst.tensors) {
    if (ti.decl->role != TensorRole::Input) continue;
    Rng rng(input_stream_seed(seed, k++));
    TensorData t(ti.type, ti.shape);
    std::string where = inst.full_name() + ": input '" + ti.decl->name + "'";
    if (ti.decl->domain.kind == DomainKind::Spd) {
      fill_spd(t, rng, where);  // positive diagonal: never all-zero, never all-equal for n >= 2
    } else {
      ValueRange d = input_value_range(inst, ti);
      fill_uniform(t, d, rng);
      for (int attempt = 0; attempt < 100 && degenerate(t, d); ++attempt) fill_uniform(t, d, rng);
      if (degenerate(t, d)) {
        // Tiny domains or tensors: set the first two elements to the ends (nonzero one first).
        if (d.is_float) {
          double a = d.fhi != 0 ? d.fhi : d.flo, b = d.fhi != 0 ? d.flo : d.fhi;
          t.f[0] = a;
          if (t.f.size() > 1) t.f[1] = b;
        } else {
          int64_t a = d.ihi != 0 ? d.ihi : d.ilo, b = d.ihi != 0 ? d.ilo : d.ihi;
          t.i[0] = a;
          if (t.i.size() > 1) t.i[1] = b;
        }
      }
    }
    out.push_back(std::move(t));
  }
  return out;
}

}  // namespace ekb::ir
