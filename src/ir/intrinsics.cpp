// The intrinsic functions of docs/IR.md (plus `select`), their arity and type class.
#include <array>

#include "ir/verify_internal.h"

namespace ekb::ir::detail {

namespace {
using C = IntrinsicClass;
constexpr std::array<IntrinsicInfo, 29> kIntrinsics{{
    {"exp", 1, C::FloatMath},   {"log", 1, C::FloatMath},     {"log2", 1, C::FloatMath},
    {"exp2", 1, C::FloatMath},  {"sqrt", 1, C::FloatMath},    {"rsqrt", 1, C::FloatMath},
    {"tanh", 1, C::FloatMath},  {"erf", 1, C::FloatMath},     {"sin", 1, C::FloatMath},
    {"cos", 1, C::FloatMath},   {"tan", 1, C::FloatMath},     {"atan", 1, C::FloatMath},
    {"atan2", 2, C::FloatMath}, {"sigmoid", 1, C::FloatMath}, {"pow", 2, C::FloatMath},
    {"floor", 1, C::FloatMath}, {"ceil", 1, C::FloatMath},    {"round", 1, C::FloatMath},
    {"round_even", 1, C::FloatMath}, {"trunc", 1, C::FloatMath},
    {"min", 2, C::MinMax},      {"max", 2, C::MinMax},        {"abs", 1, C::Abs},
    {"clamp", 3, C::Clamp},     {"fma", 3, C::Fma},           {"rdmulh", 2, C::Quant},
    {"rshift", 2, C::Quant},    {"requant", 3, C::Quant},     {"select", 3, C::Select},
}};
}  // namespace

const IntrinsicInfo* find_intrinsic(std::string_view name) {
  for (const auto& i : kIntrinsics)
    if (i.name == name) return &i;
  return nullptr;
}

std::vector<std::string> intrinsic_names() {
  std::vector<std::string> out;
  for (const auto& i : kIntrinsics) out.emplace_back(i.name);
  return out;
}

}  // namespace ekb::ir::detail
