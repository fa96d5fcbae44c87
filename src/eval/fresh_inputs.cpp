#include "eval/fresh_inputs.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <stdexcept>
#include <type_traits>

#include "ir/tensor_data.h"

namespace ekb::eval {

namespace {

// Runs block(k, j, count) over runs of consecutive elements k with j = (k + shift) mod n: two runs
// instead of a modulo per element.
template <typename Block>
inline void for_each_shifted(size_t n, size_t shift, Block block) {
  block(0, shift, n - shift);
  block(n - shift, 0, shift);
}

// out[k] = element(k, (k + shift) mod n) for every k, and the same into `copy` when there is one,
// in the same pass (the timing loop derives straight into the kernel's arena and keeps a copy to
// check the inputs against after the call: one read of the sources instead of two).
template <typename Storage, typename Element>
inline void write_derived(uint8_t* out, uint8_t* copy, size_t n, size_t shift, Element element) {
  Storage* __restrict x = reinterpret_cast<Storage*>(out);
  Storage* __restrict y = reinterpret_cast<Storage*>(copy);
  for_each_shifted(n, shift, [&](size_t k0, size_t j0, size_t count) {
    if (y) {
      for (size_t i = 0; i < count; ++i) x[k0 + i] = y[k0 + i] = element(k0 + i, j0 + i);
    } else {
      for (size_t i = 0; i < count; ++i) x[k0 + i] = element(k0 + i, j0 + i);
    }
  });
}

// Float types, element by element on the buffers' own encoding (no decoding into doubles first:
// this runs before every timed call, and a pass over the inputs must cost about a memcpy).
// `decode` gives an element's value, `encode` the nearest value of the type as its storage.
// Element k is base[k] plus partner[j] plus the offset, as fractions of the range, wrapped into
// [0, 1) (each term lies in [0, 1], so two subtractions wrap). Written without branches and compiled
// to vector code (CMakeLists.txt: -O3 -fno-trapping-math for this file): the wrap of random data is
// a coin toss, and as a branch it cost more than the kernels of many workloads. `Real` is the
// arithmetic's type: float where the range allows it (twice the lanes of double).
template <typename Storage, typename Real = double, typename Decode, typename Encode>
inline void derive_float(const ir::ValueRange& r, const uint8_t* base, const uint8_t* partner, uint8_t* out,
                         uint8_t* copy, size_t n, size_t shift, double offset_fraction, Decode decode, Encode encode) {
  const Real lo = static_cast<Real>(r.flo), hi = static_cast<Real>(r.fhi), span = hi - lo,
             inv = span > 0 ? 1 / span : 0, offset = static_cast<Real>(offset_fraction);
  const auto* a = reinterpret_cast<const Storage*>(base);
  const auto* b = reinterpret_cast<const Storage*>(partner);
  auto one = [&](const Storage& ak, const Storage& bj) -> Storage {
    Real t = (static_cast<Real>(decode(ak)) - lo) * inv + (static_cast<Real>(decode(bj)) - lo) * inv + offset;
    t -= static_cast<Real>(t >= 1);
    t -= static_cast<Real>(t >= 1);
    const Real v = lo + t * span;
    // Clamped where the arithmetic stepped past an end; the ends are values of the type, so
    // rounding to the nearest one (monotonic) cannot step past them again.
    return encode(std::min(std::max(v, lo), hi));
  };
  write_derived<Storage>(out, copy, n, shift, [&](size_t k, size_t j) { return one(a[k], b[j]); });
}

// f32 inputs, the most common by far: float's arithmetic unless the range's width overflows it.
inline void derive_f32(const ir::ValueRange& r, const uint8_t* base, const uint8_t* partner, uint8_t* out,
                       uint8_t* copy, size_t n, size_t shift, double offset) {
  const auto same = [](float v) { return v; };
  if (std::isfinite(static_cast<float>(r.fhi - r.flo)))
    derive_float<float, float>(r, base, partner, out, copy, n, shift, offset, same, same);
  else
    derive_float<float, double>(r, base, partner, out, copy, n, shift, offset, same,
                                [](double v) { return static_cast<float>(v); });
}

// Integer and bool types: offsets from the range's low end, in a type wide enough for the sum of
// three of them (two elements and the offset, each below the span), wrapped by subtraction. The
// narrowest such type, so that a vector holds as many elements as it can: the offset of v from the
// low end is v - low modulo the type's width, exact because it lies in [0, span).
template <typename Storage>
void derive_integer(const ir::ValueRange& r, const uint8_t* base, const uint8_t* partner, uint8_t* out,
                    uint8_t* copy, size_t n, size_t shift, uint64_t random_offset) {
  using Wide = std::conditional_t<
      (sizeof(Storage) == 1), uint16_t,
      std::conditional_t<(sizeof(Storage) == 2), uint32_t,
                         std::conditional_t<(sizeof(Storage) == 4), uint64_t, unsigned __int128>>>;
  const Wide low = static_cast<Wide>(r.ilo);  // sign-extended or truncated: v - low stays exact
  const Wide span = static_cast<Wide>(static_cast<Wide>(static_cast<uint64_t>(r.ihi) - static_cast<uint64_t>(r.ilo)) + 1);
  const Wide offset = static_cast<Wide>(static_cast<unsigned __int128>(random_offset) % span);
  const auto* a = reinterpret_cast<const Storage*>(base);
  const auto* b = reinterpret_cast<const Storage*>(partner);
  // Sign-extended to 64 bits first, then truncated: the same bits as v modulo Wide's width.
  auto from_low = [&](Storage v) { return static_cast<Wide>(static_cast<Wide>(static_cast<int64_t>(v)) - low); };
  write_derived<Storage>(out, copy, n, shift, [&](size_t k, size_t j) {
    Wide sum = static_cast<Wide>(from_low(a[k]) + from_low(b[j]) + offset);
    sum = static_cast<Wide>(sum - (sum >= span ? span : 0));
    sum = static_cast<Wide>(sum - (sum >= span ? span : 0));
    return static_cast<Storage>(low + sum);
  });
}

// One input of a set, in its element type; with clones for AVX-512 and AVX2 machines picked at load
// time (this runs before every timed call: the widest vectors the machine has).
[[gnu::target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default"), gnu::flatten]]
void derive(ir::ScalarType type, const ir::ValueRange& r, const uint8_t* base, const uint8_t* partner, uint8_t* out,
            uint8_t* copy, size_t n, size_t shift, double offset, uint64_t int_offset) {
  using ir::ScalarType;
  switch (type) {
    case ScalarType::F32:
      return derive_f32(r, base, partner, out, copy, n, shift, offset);
    case ScalarType::F64:
      return derive_float<double>(r, base, partner, out, copy, n, shift, offset, [](double v) { return v; },
                                  [](double v) { return v; });
    case ScalarType::F16:
      return derive_float<uint16_t, float>(r, base, partner, out, copy, n, shift, offset, ir::f16_to_float, ir::float_to_f16);
    case ScalarType::BF16:
      return derive_float<uint16_t, float>(r, base, partner, out, copy, n, shift, offset, ir::bf16_to_float, ir::float_to_bf16);
    case ScalarType::I8: return derive_integer<int8_t>(r, base, partner, out, copy, n, shift, int_offset);
    case ScalarType::U8: return derive_integer<uint8_t>(r, base, partner, out, copy, n, shift, int_offset);
    case ScalarType::Bool: return derive_integer<uint8_t>(r, base, partner, out, copy, n, shift, int_offset);
    case ScalarType::I16: return derive_integer<int16_t>(r, base, partner, out, copy, n, shift, int_offset);
    case ScalarType::I32: return derive_integer<int32_t>(r, base, partner, out, copy, n, shift, int_offset);
    case ScalarType::I64: return derive_integer<int64_t>(r, base, partner, out, copy, n, shift, int_offset);
    case ScalarType::Index: break;
  }
  throw std::logic_error("fresh inputs: unhandled element type");
}

// base + c * I for each [n, n] matrix of an `spd` input.
std::vector<uint8_t> derive_spd(ir::ScalarType type, const std::vector<int64_t>& shape,
                                const std::vector<uint8_t>& base, double c) {
  ir::TensorData a = ir::from_bytes(type, shape, base.data(), base.size());
  const int64_t n = shape.back();
  for (int64_t m = 0; m * n * n < a.num_elements(); ++m)
    for (int64_t i = 0; i < n; ++i) {
      double& d = a.f[static_cast<size_t>(m * n * n + i * n + i)];
      d = ir::round_to_type(type, d + c);
    }
  return ir::to_bytes(a);
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
    const bool spd = t->decl->domain.kind == ir::DomainKind::Spd;
    Input in{t->type, t->shape, spd, spd ? ir::ValueRange{} : ir::input_value_range(inst, *t)};
    inputs_.push_back(std::move(in));
  }
}

void FreshInputs::next(InputBuffers& out) { write(draw(), out); }

void FreshInputs::write(const Draw& d, InputBuffers& out) const {
  out.resize(inputs_.size());
  std::vector<uint8_t*> dest(inputs_.size());
  for (size_t i = 0; i < inputs_.size(); ++i) {
    out[i].resize(bases_[0]->inputs[i].size());
    dest[i] = out[i].data();
  }
  write(d, dest, nullptr);
}

FreshInputs::Draw FreshInputs::draw() {
  Draw d;
  const size_t nb = bases_.size();
  d.base = sets_ % nb;
  d.partner = (sets_ + 1 + rng_.next() % nb) % nb;  // may be the base itself
  ++sets_;
  for (const Input& in : inputs_) {
    const size_t n = bases_[d.base]->inputs[d.per_input.size()].size() / ir::byte_size(in.type);
    InputDraw x;
    // A shift of zero would add each element to itself: draw it among the other positions.
    x.shift = n > 1 ? static_cast<size_t>(rng_.uniform_int(1, static_cast<int64_t>(n) - 1)) : 0;
    x.offset = rng_.uniform01();
    x.seed = rng_.next();
    d.per_input.push_back(x);
  }
  return d;
}

void FreshInputs::write(const Draw& d, const std::vector<uint8_t*>& dest, InputBuffers* copy) const {
  if (copy) copy->resize(inputs_.size());
  const Trial& base = *bases_[d.base];
  const Trial& partner = *bases_[d.partner];
  for (size_t i = 0; i < inputs_.size(); ++i) {
    const Input& in = inputs_[i];
    const InputDraw& x = d.per_input[i];
    const std::vector<uint8_t>& a = base.inputs[i];
    const size_t n = a.size() / ir::byte_size(in.type);
    if (copy) (*copy)[i].resize(a.size());
    uint8_t* copy_data = copy ? (*copy)[i].data() : nullptr;
    if (in.spd) {
      const std::vector<uint8_t> derived = derive_spd(in.type, in.shape, a, 0.05 + 0.45 * x.offset);
      std::memcpy(dest[i], derived.data(), derived.size());
      if (copy_data) std::memcpy(copy_data, derived.data(), derived.size());
    } else {
      derive(in.type, in.range, a.data(), partner.inputs[i].data(), dest[i], copy_data, n, x.shift, x.offset, x.seed);
    }
  }
}

}  // namespace ekb::eval
