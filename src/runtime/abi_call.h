// Calling `ekb_main` with a workload's argument list, whose length is only known at run time.
//
// On the C calling conventions of x86-64 (System V) and AArch64 (AAPCS64), a pointer and an
// int64_t are passed the same way (an integer register, then an 8-byte stack slot), so
// `void ekb_main(const float* x, float* y, int64_t n)` can be called through a function pointer of
// type void(*)(uint64_t, uint64_t, uint64_t). The dispatch below picks the exact arity.
#pragma once
#include <cstddef>
#include <cstdint>

namespace ekb::runtime {

constexpr size_t kMaxKernelArgs = 64;

// Calls fn(args[0], ..., args[n-1]). n <= kMaxKernelArgs.
void call_void_u64(void* fn, const uint64_t* args, size_t n);
// Calls fn(args[0], ..., args[n-1]) and returns its int64_t result (ekb_scratch_bytes).
int64_t call_i64_u64(void* fn, const uint64_t* args, size_t n);

}  // namespace ekb::runtime
