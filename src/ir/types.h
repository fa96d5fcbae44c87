// Scalar element types of the IR and their properties.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace ekb::ir {

enum class ScalarType : uint8_t { Bool, I8, U8, I16, I32, I64, F16, BF16, F32, F64, Index };

std::string_view scalar_type_name(ScalarType t);           // "f32"; Index prints as "index"
std::optional<ScalarType> parse_scalar_type(std::string_view name);  // not "index": it is internal
bool is_float(ScalarType t);
bool is_integer(ScalarType t);  // includes Index, excludes Bool
bool is_half(ScalarType t);     // f16 or bf16: storage formats, computed in f32 (widen_half_precision)
bool is_signed(ScalarType t);
int bit_width(ScalarType t);   // Index is 64, Bool is 1
int byte_size(ScalarType t);   // storage size in a buffer (Bool is 1)
// Inclusive representable range of an integer type (Index: full int64).
int64_t int_min(ScalarType t);
int64_t int_max(ScalarType t);
// Wraps an exact integer value to the type's width (two's complement).
int64_t wrap_int(ScalarType t, int64_t v);
// Clamps an exact integer value to the type's range.
int64_t saturate_int(ScalarType t, int64_t v);

}  // namespace ekb::ir
