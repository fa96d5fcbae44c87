// Poison written into every output before every call (docs/EVALUATION.md), so that an element the kernel
// did not write is recognisable afterwards.
//
// Two patterns, alternated between trials, so that an element left unwritten cannot coincide with
// the right value in every trial:
//   floats: quiet NaNs with payloads that arithmetic never produces (a computed NaN carries the
//           default payload), of opposite signs;
//   integers: the byte patterns 0xA5... and 0x5A... (e.g. i32 -1515870811 and 1515870810);
//   bool: the bytes 0xA5 and 0x5A, which are not valid booleans at all.
// An integer element equal to its sentinel counts as unwritten only where the reference differs
// from the sentinel.
#pragma once
#include <cstddef>
#include <cstdint>

#include "ir/types.h"

namespace ekb::runtime {

constexpr int kPoisonPatterns = 2;

// The element bits of pattern p (0 or 1) for type t, in the low byte_size(t) bytes.
uint64_t poison_bits(ir::ScalarType t, int pattern);
// Fills n elements of type t at `data` with pattern p.
void fill_poison(ir::ScalarType t, int pattern, uint8_t* data, size_t n);
// Fills `bytes` of scratch memory with junk that differs between calls (`round`), so that nothing
// a kernel leaves there survives to its next call.
void fill_scratch_junk(uint8_t* data, size_t bytes, uint64_t round);

}  // namespace ekb::runtime
