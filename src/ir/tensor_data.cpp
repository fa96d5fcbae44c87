#include "ir/tensor_data.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>

namespace ekb::ir {

TensorData::TensorData(ScalarType t, std::vector<int64_t> s) : type(t), shape(std::move(s)) {
  int64_t n = num_elements();
  if (ir::is_float(t))
    f.assign(static_cast<size_t>(n), 0.0);
  else
    i.assign(static_cast<size_t>(n), 0);
}

int64_t TensorData::num_elements() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

namespace {

// Rounds v to a binary format with `p` significand bits (implicit bit included), minimum normal
// exponent `emin` and maximum exponent `emax`: ties to even, overflow gives inf, NaN and inf pass
// through. Exact integer arithmetic on the double's bits.
double round_format(double v, int p, int emin, int emax) {
  uint64_t u;
  std::memcpy(&u, &v, 8);
  const uint64_t sign = u >> 63;
  const uint64_t a = u & ~(uint64_t{1} << 63);
  const int biased = static_cast<int>(a >> 52);
  if (biased == 0x7FF || a == 0) return v;      // inf, NaN, +-0
  if (biased == 0) return sign ? -0.0 : 0.0;    // f64 subnormal: far below every target's range
  const int e = biased - 1023;                  // v = m * 2^(e - 52), m has 53 bits
  const uint64_t m = (a & ((uint64_t{1} << 52) - 1)) | (uint64_t{1} << 52);
  int keep = p - 1;                             // fraction bits kept
  if (e < emin) keep -= emin - e;               // subnormal in the target format
  const int drop = 52 - keep;
  uint64_t q = 0;
  if (drop < 64) {
    q = m >> drop;
    const uint64_t rem = m & ((uint64_t{1} << drop) - 1);
    const uint64_t half = uint64_t{1} << (drop - 1);
    if (rem > half || (rem == half && (q & 1))) ++q;
  }
  // q * 2^(e - keep), exact; the exponent is within [-1022, 1023] for every target format.
  const uint64_t pbits = static_cast<uint64_t>(e - keep + 1023) << 52;
  double pow2;
  std::memcpy(&pow2, &pbits, 8);
  double r = static_cast<double>(q) * pow2;
  if (e >= emax && r > (2.0 - std::ldexp(1.0, 1 - p)) * std::ldexp(1.0, emax))
    r = std::numeric_limits<double>::infinity();
  return sign ? -r : r;
}

double round_f16(double v) { return round_format(v, 11, -14, 15); }
double round_bf16(double v) { return round_format(v, 8, -126, 127); }

}  // namespace

uint16_t f16_bits(double v) {
  uint64_t bits;
  std::memcpy(&bits, &v, 8);
  const uint64_t magnitude = bits & 0x7FFFFFFFFFFFFFFFull;
  // Results that are normal f16 values (2^-14 <= |v| < 65520) on the bits alone: the 52-bit
  // fraction rounded to 10 bits, to nearest even (a carry into the exponent is still right), the
  // exponent rebiased from 1023 to 15. Fresh inputs and every conversion of the harness pass here.
  if (magnitude >= 0x3F10000000000000ull && magnitude < 0x40EFFE0000000000ull) {
    const uint64_t rounded = magnitude + 0x1FFFFFFFFFFull + ((magnitude >> 42) & 1);
    return static_cast<uint16_t>(((bits >> 48) & 0x8000) | ((rounded >> 42) - (uint64_t{1023 - 15} << 10)));
  }
  uint16_t sign = std::signbit(v) ? 0x8000 : 0;
  if (std::isnan(v)) return 0x7E00;
  double r = std::fabs(round_f16(v));
  if (std::isinf(r)) return sign | 0x7C00;
  if (r == 0) return sign;
  if (r < 0x1p-14) return sign | static_cast<uint16_t>(r * 0x1p24);  // subnormal: multiples of 2^-24
  // r is an f16 value: its exponent and the top 10 of its 52 fraction bits are the f16's fields.
  uint64_t u;
  std::memcpy(&u, &r, 8);
  const int e = static_cast<int>(u >> 52) - 1023;
  return sign | static_cast<uint16_t>((e + 15) << 10) | static_cast<uint16_t>((u >> 42) & 0x3FF);
}

double f16_value(uint16_t bits) {
  const int biased_exponent = (bits >> 10) & 0x1F;
  if (biased_exponent != 0 && biased_exponent != 0x1F) {  // normal: the fields moved into a double's
    const uint64_t d = (static_cast<uint64_t>(bits & 0x8000) << 48) |
                       (static_cast<uint64_t>(biased_exponent + 1023 - 15) << 52) |
                       (static_cast<uint64_t>(bits & 0x3FF) << 42);
    double v;
    std::memcpy(&v, &d, 8);
    return v;
  }
  double sign = (bits & 0x8000) ? -1.0 : 1.0;
  int exp_field = (bits >> 10) & 0x1F;
  int mant = bits & 0x3FF;
  if (exp_field == 0x1F)
    return mant ? std::numeric_limits<double>::quiet_NaN()
                : sign * std::numeric_limits<double>::infinity();
  if (exp_field == 0) return sign * std::ldexp(static_cast<double>(mant), -24);
  return sign * std::ldexp(1.0 + mant / 1024.0, exp_field - 15);
}

uint16_t bf16_bits(double v) {
  if (std::isnan(v)) return std::signbit(v) ? 0xFFC0 : 0x7FC0;
  float r = static_cast<float>(round_bf16(v));  // exact: a bf16 value is a float value
  uint32_t u;
  std::memcpy(&u, &r, 4);
  return static_cast<uint16_t>(u >> 16);
}

double bf16_value(uint16_t bits) {
  uint32_t u = static_cast<uint32_t>(bits) << 16;
  float r;
  std::memcpy(&r, &u, 4);
  return r;
}

double round_to_type(ScalarType t, double v) {
  switch (t) {
    case ScalarType::F16: return round_f16(v);
    case ScalarType::BF16: return round_bf16(v);
    case ScalarType::F32: return static_cast<double>(static_cast<float>(v));
    default: return v;
  }
}

double next_up(ScalarType t, double v) {
  if (std::isnan(v) || v == std::numeric_limits<double>::infinity()) return v;
  switch (t) {
    case ScalarType::F16: {
      if (v == 0) return f16_value(1);
      uint16_t b = f16_bits(v);
      return f16_value(v > 0 ? b + 1 : b - 1);
    }
    case ScalarType::BF16: {
      if (v == 0) return bf16_value(1);
      uint16_t b = bf16_bits(v);
      return bf16_value(v > 0 ? b + 1 : b - 1);
    }
    case ScalarType::F32:
      return std::nextafter(static_cast<float>(v), std::numeric_limits<float>::infinity());
    default: return std::nextafter(v, std::numeric_limits<double>::infinity());
  }
}

double next_down(ScalarType t, double v) { return -next_up(t, -v); }

namespace {
void store_le(uint8_t* p, uint64_t v, int bytes) {
  for (int b = 0; b < bytes; ++b) p[b] = static_cast<uint8_t>(v >> (8 * b));
}
uint64_t get_le(const uint8_t* p, int bytes) {
  uint64_t v = 0;
  for (int b = 0; b < bytes; ++b) v |= static_cast<uint64_t>(p[b]) << (8 * b);
  return v;
}
// Stores every element of `values` converted by `bits` as a `Bytes`-wide little-endian word (the
// loop per type, not per element, keeps inputs of millions of elements cheap to serialize).
template <int Bytes, class Values, class Bits>
void store_all(uint8_t* out, const Values& values, Bits bits) {
  for (size_t k = 0; k < values.size(); ++k) store_le(out + k * Bytes, bits(values[k]), Bytes);
}
}  // namespace

std::vector<uint8_t> to_bytes(const TensorData& t) {
  int64_t n = t.num_elements();
  int bs = t.type == ScalarType::Index ? 8 : byte_size(t.type);
  bool fl = t.is_float();
  if (fl ? static_cast<int64_t>(t.f.size()) != n : static_cast<int64_t>(t.i.size()) != n)
    throw std::runtime_error("to_bytes: tensor data does not match its shape");
  std::vector<uint8_t> out(static_cast<size_t>(n * bs));
  uint8_t* p = out.data();
  switch (t.type) {
    case ScalarType::F16: store_all<2>(p, t.f, [](double x) { return f16_bits(x); }); break;
    case ScalarType::BF16: store_all<2>(p, t.f, [](double x) { return bf16_bits(x); }); break;
    case ScalarType::F32:
      store_all<4>(p, t.f, [](double x) {
        const float f = static_cast<float>(x);
        uint32_t u;
        std::memcpy(&u, &f, 4);
        return u;
      });
      break;
    case ScalarType::F64:
      store_all<8>(p, t.f, [](double x) {
        uint64_t u;
        std::memcpy(&u, &x, 8);
        return u;
      });
      break;
    default:
      for (int64_t k = 0; k < n; ++k)
        store_le(p + k * bs, static_cast<uint64_t>(wrap_int(t.type, t.i[static_cast<size_t>(k)])), bs);
      break;
  }
  return out;
}

TensorData from_bytes(ScalarType type, std::vector<int64_t> shape, const uint8_t* data,
                      size_t size) {
  TensorData t(type, std::move(shape));
  int64_t n = t.num_elements();
  int bs = type == ScalarType::Index ? 8 : byte_size(type);
  if (static_cast<int64_t>(size) != n * bs)
    throw std::runtime_error("from_bytes: buffer size does not match the tensor's shape and type");
  for (int64_t k = 0; k < n; ++k) {
    const uint8_t* p = data + k * bs;
    uint64_t u = get_le(p, bs);
    switch (type) {
      case ScalarType::F16: t.f[k] = f16_value(static_cast<uint16_t>(u)); break;
      case ScalarType::BF16: t.f[k] = bf16_value(static_cast<uint16_t>(u)); break;
      case ScalarType::F32: {
        uint32_t w = static_cast<uint32_t>(u);
        float x;
        std::memcpy(&x, &w, 4);
        t.f[k] = x;
        break;
      }
      case ScalarType::F64: std::memcpy(&t.f[k], &u, 8); break;
      default: t.i[k] = wrap_int(type, static_cast<int64_t>(u)); break;
    }
  }
  return t;
}

}  // namespace ekb::ir
