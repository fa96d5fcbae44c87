#include "eval/output_check.h"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>

#include "eval/poison.h"
#include "suite/tolerance.h"

namespace ekb::eval {

namespace {

using ir::ScalarType;

template <typename T>
T load(const uint8_t* data, int64_t k) {
  T v;
  std::memcpy(&v, data + k * static_cast<int64_t>(sizeof(T)), sizeof(T));
  return v;
}

uint64_t element_bits(ScalarType t, const uint8_t* data, int64_t k) {
  switch (ir::byte_size(t)) {
    case 1: return load<uint8_t>(data, k);
    case 2: return load<uint16_t>(data, k);
    case 4: return load<uint32_t>(data, k);
    default: return load<uint64_t>(data, k);
  }
}

double float_value(ScalarType t, const uint8_t* data, int64_t k) {
  switch (t) {
    case ScalarType::F16: return ir::f16_value(load<uint16_t>(data, k));
    case ScalarType::BF16: return ir::bf16_value(load<uint16_t>(data, k));
    case ScalarType::F32: return load<float>(data, k);
    default: return load<double>(data, k);
  }
}

// Integer and bool elements as exact values (a bool byte other than 0/1 stays visible as itself).
int64_t int_value(ScalarType t, const uint8_t* data, int64_t k) {
  switch (t) {
    case ScalarType::I8: return load<int8_t>(data, k);
    case ScalarType::U8: return load<uint8_t>(data, k);
    case ScalarType::Bool: return load<uint8_t>(data, k);
    case ScalarType::I16: return load<int16_t>(data, k);
    case ScalarType::I32: return load<int32_t>(data, k);
    default: return load<int64_t>(data, k);
  }
}

// The poison pattern's value as the reference would hold it, to tell "unwritten" from "happens to
// equal the sentinel" for integer outputs.
int64_t poison_int_value(ScalarType t, int pattern) {
  uint64_t bits = poison_bits(t, pattern);
  uint8_t buf[8];
  std::memcpy(buf, &bits, 8);
  return int_value(t, buf, 0);
}

// "3.2x": how many times its allowed error an element is off.
std::string ratio_text(double ratio) {
  char b[40];
  std::snprintf(b, sizeof b, "%.3gx", ratio);
  return b;
}

std::string number(double v) {
  char b[40];
  std::snprintf(b, sizeof b, "%.9g", v);
  return b;
}

}  // namespace

std::string format_index(const std::vector<int64_t>& shape, int64_t flat) {
  std::vector<int64_t> idx(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    idx[d] = shape[d] ? flat % shape[d] : 0;
    flat = shape[d] ? flat / shape[d] : 0;
  }
  std::string s = "[";
  for (size_t d = 0; d < idx.size(); ++d) s += (d ? ", " : "") + std::to_string(idx[d]);
  return s + "]";
}

double finite_rms(const ir::TensorData& t) {
  double sum = 0;
  int64_t n = 0;
  for (int64_t k = 0; k < t.num_elements(); ++k) {
    const double v = t.as_double(k);
    if (!std::isfinite(v)) continue;
    sum += v * v;
    ++n;
  }
  return n ? std::sqrt(sum / static_cast<double>(n)) : 0.0;
}

OutputVerdict check_output(const std::string& name, const uint8_t* data, const ir::TensorData& expected,
                           double rms, int poison_pattern, double tolerance_scale) {
  OutputVerdict v;
  const ScalarType t = expected.type;
  const int64_t n = expected.num_elements();
  const bool is_float = ir::is_float(t);
  const std::string where = "output '" + name + "'";

  if (poison_pattern >= 0) {
    const uint64_t pbits = poison_bits(t, poison_pattern);
    const int64_t pint = is_float ? 0 : poison_int_value(t, poison_pattern);
    int64_t count = 0, first = -1;
    for (int64_t k = 0; k < n; ++k) {
      if (element_bits(t, data, k) != pbits) continue;
      if (!is_float && expected.i[static_cast<size_t>(k)] == pint) continue;  // cannot tell: fine
      if (first < 0) first = k;
      ++count;
    }
    if (count) {
      v.error = ErrorKind::UnwrittenOutput;
      v.message = where + ": " + std::to_string(count) + " of " + std::to_string(n) +
                  " elements were not written (they still hold the poison written before the call), "
                  "the first at " + format_index(expected.shape, first);
      return v;
    }
  }

  // The worst element is the one furthest outside (or closest to leaving) its allowed error: the
  // one a developer should look at, and v.max_error_ratio says how close a pass came.
  suite::Tolerance tol = suite::tolerance_for(t);
  tol.rtol *= tolerance_scale;
  tol.atol_rms *= tolerance_scale;
  const double inf = std::numeric_limits<double>::infinity();
  int64_t bad = 0, first = -1, worst = -1;
  double worst_ratio = -1, worst_got = 0, worst_want = 0, worst_allowed = 0;
  for (int64_t k = 0; k < n; ++k) {
    const size_t ks = static_cast<size_t>(k);
    double got, want, allowed = 0, ratio;
    if (is_float) {
      want = expected.f[ks];
      got = float_value(t, data, k);
      if (std::isnan(want)) ratio = std::isnan(got) ? 0 : inf;
      else if (std::isinf(want)) ratio = got == want ? 0 : inf;
      else if (!std::isfinite(got)) ratio = inf;
      else {
        const double err = std::fabs(got - want);
        allowed = tol.rtol * std::fabs(want) + tol.atol_rms * rms;
        ratio = err <= allowed ? (allowed > 0 ? err / allowed : 0) : (allowed > 0 ? err / allowed : inf);
        v.max_abs_error = std::max(v.max_abs_error, err);
      }
    } else {
      want = static_cast<double>(expected.i[ks]);
      got = static_cast<double>(int_value(t, data, k));
      ratio = got == want ? 0 : inf;  // exact: no error is allowed
      v.max_abs_error = std::max(v.max_abs_error, std::fabs(got - want));
    }
    if (ratio > 1 && bad++ == 0) first = k;
    // Among elements equally far out (several infinities), the first stays the worst.
    if (ratio > worst_ratio) {
      worst_ratio = ratio, worst = k;
      worst_got = got, worst_want = want, worst_allowed = allowed;
    }
  }
  v.max_error_ratio = std::max(worst_ratio, 0.0);
  if (bad) {
    v.error = ErrorKind::Mismatch;
    v.message = where + " at " + format_index(expected.shape, worst) + ": got " + number(worst_got) +
                ", expected " + number(worst_want);
    if (is_float && std::isfinite(worst_got) && std::isfinite(worst_want))
      v.message += " (|error| " + number(std::fabs(worst_got - worst_want)) + " > allowed " + number(worst_allowed) +
                   (std::isfinite(worst_ratio) ? ", " + ratio_text(worst_ratio) + " the allowed error)" : ")");
    else if (!is_float)
      v.message += " (integer outputs must be exact)";
    v.message += "; " + std::to_string(bad) + " of " + std::to_string(n) + " elements differ" +
                 (bad > 1 ? ", the worst shown, the first at " + format_index(expected.shape, first) : "");
  }
  return v;
}

}  // namespace ekb::eval
