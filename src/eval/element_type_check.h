// A check appended to a C, C++ or CUDA source solution so that a kernel written for other element
// types than its workload's (an all.c written on f32 workloads, run on the f16 twin) fails to
// compile with "element types differ: this workload's C_in is f16 (the source declares float)"
// instead of failing later with an out-of-bounds access that hides the cause.
//
// The check compares the type of the source's `ekb_main` with the signature the workload would
// have under other element types: those of the pattern's other workloads, and each `types` name
// bound to each other scalar type. Only an exact match with one of those fires; a signature that
// differs in another way (int instead of int64_t, a missing const) is left to the harness as
// before. Types that are one C type cannot be told apart (cpu: ekb_f16 and ekb_bf16 are both
// uint16_t, ekb_bool is uint8_t; cuda: bool is uint8_t). OpenCL sources get no check (the kernels'
// parameter types are not visible to the harness without the device compiler's argument info).
#pragma once
#include <string>

#include "ir/instance.h"
#include "runtime/backend.h"

namespace ekb::eval {

// The text to append to a source in `language` for workload `inst`: "" for OpenCL and for a source
// whose code (outside comments and string literals) never names ekb_main (it fails to load as
// before). It starts on a new line with a #line
// directive, so the compiler's diagnostics about the solution's own lines keep their numbers.
std::string element_type_check(const ir::Instance& inst, runtime::Language language,
                               const std::string& source_text);

}  // namespace ekb::eval
