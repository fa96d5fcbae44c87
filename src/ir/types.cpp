#include "ir/types.h"

#include <array>
#include <limits>

namespace ekb::ir {

namespace {
struct TypeInfo {
  ScalarType type;
  std::string_view name;
  int bits;
  bool is_float;
  bool is_signed;
};
constexpr std::array<TypeInfo, 11> kTypes{{
    {ScalarType::Bool, "bool", 1, false, false},
    {ScalarType::I8, "i8", 8, false, true},
    {ScalarType::U8, "u8", 8, false, false},
    {ScalarType::I16, "i16", 16, false, true},
    {ScalarType::I32, "i32", 32, false, true},
    {ScalarType::I64, "i64", 64, false, true},
    {ScalarType::F16, "f16", 16, true, true},
    {ScalarType::BF16, "bf16", 16, true, true},
    {ScalarType::F32, "f32", 32, true, true},
    {ScalarType::F64, "f64", 64, true, true},
    {ScalarType::Index, "index", 64, false, true},
}};
const TypeInfo& info(ScalarType t) { return kTypes[static_cast<size_t>(t)]; }
}  // namespace

std::string_view scalar_type_name(ScalarType t) { return info(t).name; }

std::optional<ScalarType> parse_scalar_type(std::string_view name) {
  for (const auto& ti : kTypes)
    if (ti.name == name && ti.type != ScalarType::Index) return ti.type;
  return std::nullopt;
}

bool is_float(ScalarType t) { return info(t).is_float; }
bool is_integer(ScalarType t) { return !info(t).is_float && t != ScalarType::Bool; }
bool is_half(ScalarType t) { return t == ScalarType::F16 || t == ScalarType::BF16; }
bool is_signed(ScalarType t) { return info(t).is_signed; }
int bit_width(ScalarType t) { return info(t).bits; }
int byte_size(ScalarType t) { return t == ScalarType::Bool ? 1 : info(t).bits / 8; }

int64_t int_min(ScalarType t) {
  int bits = bit_width(t);
  if (t == ScalarType::Bool || !is_signed(t)) return 0;
  if (bits == 64) return std::numeric_limits<int64_t>::min();
  return -(int64_t{1} << (bits - 1));
}

int64_t int_max(ScalarType t) {
  int bits = bit_width(t);
  if (t == ScalarType::Bool) return 1;
  if (bits == 64) return std::numeric_limits<int64_t>::max();
  return is_signed(t) ? (int64_t{1} << (bits - 1)) - 1 : (int64_t{1} << bits) - 1;
}

int64_t wrap_int(ScalarType t, int64_t v) {
  int bits = bit_width(t);
  if (t == ScalarType::Bool) return v != 0;
  if (bits == 64) return v;
  uint64_t mask = (uint64_t{1} << bits) - 1;
  uint64_t u = static_cast<uint64_t>(v) & mask;
  if (is_signed(t) && (u >> (bits - 1)) != 0) u |= ~mask;
  return static_cast<int64_t>(u);
}

int64_t saturate_int(ScalarType t, int64_t v) {
  if (t == ScalarType::Bool) return v != 0;
  if (v < int_min(t)) return int_min(t);
  if (v > int_max(t)) return int_max(t);
  return v;
}

}  // namespace ekb::ir
