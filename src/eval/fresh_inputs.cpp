#include "eval/fresh_inputs.h"

#include <cstring>
#include <random>
#include <stdexcept>

#include "ir/tensor_data.h"

namespace ekb::eval {

namespace {

// An element of `base` plus the element `shift` places further of `partner`, plus `offset`, as
// fractions of the range, wrapped into [0, 1). Each term lies in [0, 1], so two subtractions wrap.
inline double wrapped_fraction(double a, double b, double offset) {
  double t = a + b + offset;
  t -= t >= 1 ? 1 : 0;
  t -= t >= 1 ? 1 : 0;
  return t;
}

// The f32 case, by far the most common, without decoding the buffers into doubles first.
void derive_f32(const ir::ValueRange& r, const uint8_t* base, const uint8_t* partner, uint8_t* out,
                size_t n, size_t shift, double offset) {
  const double lo = r.flo, span = r.fhi - r.flo, inv = span > 0 ? 1 / span : 0;
  const auto* a = reinterpret_cast<const float*>(base);
  const auto* b = reinterpret_cast<const float*>(partner);
  auto* x = reinterpret_cast<float*>(out);
  auto one = [&](size_t k, size_t j) {
    const double t = wrapped_fraction((a[k] - lo) * inv, (b[j] - lo) * inv, offset);
    float v = static_cast<float>(lo + t * span);
    v = v < r.flo ? static_cast<float>(r.flo) : v;  // rounding may step past an end: clamp
    x[k] = v > r.fhi ? static_cast<float>(r.fhi) : v;
  };
  // Two loops instead of a modulo per element.
  for (size_t k = 0; k + shift < n; ++k) one(k, k + shift);
  for (size_t k = n - shift; k < n; ++k) one(k, k + shift - n);
}

void derive_decoded(const ir::ScalarType type, const std::vector<int64_t>& shape, const ir::ValueRange& r,
                    const std::vector<uint8_t>& base, const std::vector<uint8_t>& partner,
                    std::vector<uint8_t>& out, size_t shift, double offset, uint64_t int_offset) {
  const ir::TensorData a = ir::from_bytes(type, shape, base.data(), base.size());
  const ir::TensorData b = ir::from_bytes(type, shape, partner.data(), partner.size());
  ir::TensorData x(type, shape);
  const size_t n = static_cast<size_t>(a.num_elements());
  if (a.is_float()) {
    const double lo = r.flo, span = r.fhi - r.flo, inv = span > 0 ? 1 / span : 0;
    for (size_t k = 0; k < n; ++k) {
      const double t = wrapped_fraction((a.f[k] - lo) * inv, (b.f[(k + shift) % n] - lo) * inv, offset);
      double v = ir::round_to_type(type, lo + t * span);
      x.f[k] = v < r.flo ? r.flo : v > r.fhi ? r.fhi : v;
    }
  } else {
    using Wide = unsigned __int128;  // spans up to 2^64 and sums of two such values
    const Wide span = static_cast<Wide>(static_cast<uint64_t>(r.ihi) - static_cast<uint64_t>(r.ilo)) + 1;
    for (size_t k = 0; k < n; ++k) {
      const Wide sum = static_cast<Wide>(static_cast<uint64_t>(a.i[k] - r.ilo)) +
                       static_cast<uint64_t>(b.i[(k + shift) % n] - r.ilo) + int_offset;
      x.i[k] = r.ilo + static_cast<int64_t>(static_cast<uint64_t>(sum % span));
    }
  }
  out = ir::to_bytes(x);
}

// base + c * I for each [n, n] matrix of an `spd` input.
void derive_spd(ir::ScalarType type, const std::vector<int64_t>& shape, const std::vector<uint8_t>& base,
                std::vector<uint8_t>& out, double c) {
  ir::TensorData a = ir::from_bytes(type, shape, base.data(), base.size());
  const int64_t n = shape.back();
  for (int64_t m = 0; m * n * n < a.num_elements(); ++m)
    for (int64_t i = 0; i < n; ++i) {
      double& d = a.f[static_cast<size_t>(m * n * n + i * n + i)];
      d = ir::round_to_type(type, d + c);
    }
  out = ir::to_bytes(a);
}

uint64_t unpredictable_seed() {
  std::random_device rd;
  return (static_cast<uint64_t>(rd()) << 32) ^ rd();
}

}  // namespace

FreshInputs::FreshInputs(const WorkloadReference& reference, std::vector<const Trial*> bases)
    : bases_(std::move(bases)), rng_(unpredictable_seed()) {
  if (bases_.empty()) throw std::invalid_argument("FreshInputs needs at least one trial");
  const ir::Instance& inst = reference.instance();
  for (const ir::TensorInstance* t : reference.interface().inputs) {
    Input in{t->type, t->shape};
    in.spd = t->decl->domain.kind == ir::DomainKind::Spd;
    if (!in.spd) in.range = ir::input_value_range(inst, *t);
    inputs_.push_back(std::move(in));
  }
}

void FreshInputs::next(std::vector<std::vector<uint8_t>>& out) {
  out.resize(inputs_.size());
  const size_t nb = bases_.size();
  const Trial& base = *bases_[sets_ % nb];
  const Trial& partner = *bases_[(sets_ + 1 + rng_.next() % nb) % nb];  // may be base itself
  ++sets_;
  for (size_t i = 0; i < inputs_.size(); ++i) {
    const Input& in = inputs_[i];
    const std::vector<uint8_t>& a = base.inputs[i];
    const size_t n = a.size() / ir::byte_size(in.type);
    // A shift of zero would add each element to itself: draw it among the other positions.
    const size_t shift = n > 1 ? static_cast<size_t>(rng_.uniform_int(1, static_cast<int64_t>(n) - 1)) : 0;
    const double offset = rng_.uniform01();
    if (in.spd) {
      derive_spd(in.type, in.shape, a, out[i], 0.05 + 0.45 * offset);
    } else if (in.type == ir::ScalarType::F32) {
      out[i].resize(a.size());
      derive_f32(in.range, a.data(), partner.inputs[i].data(), out[i].data(), n, shift, offset);
    } else {
      derive_decoded(in.type, in.shape, in.range, a, partner.inputs[i], out[i], shift, offset, rng_.next());
    }
  }
}

}  // namespace ekb::eval
