// The poison patterns live in runtime/poison.h, where a device's agent (ekb-device serve) poisons
// outputs too; eval's code names them as before.
#pragma once
#include "runtime/poison.h"

namespace ekb::eval {
using runtime::fill_poison;
using runtime::fill_scratch_junk;
using runtime::kPoisonPatterns;
using runtime::poison_bits;
}  // namespace ekb::eval
