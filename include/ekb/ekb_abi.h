/* EdgeKernelBench kernel ABI, for C and C++ source solutions on the `cpu` backend.
 *
 * A solution defines   void ekb_main(<inputs...>, <outputs...>, <int64_t params...>)
 * with C linkage; `ekb prompt WORKLOAD --backend cpu` prints the exact signature. Inputs are
 * read-only, every output element must be written, and no memory may be kept between calls.
 * A solution that needs scratch memory may declare it instead of allocating it: it also defines
 *     int64_t ekb_scratch_bytes(<int64_t params...>);
 * and then ekb_main takes one more final parameter, `void* scratch` (64-byte aligned), allocated
 * outside the timed call. Memory allocated in the call is allowed, timed, and freed before return.
 * See docs/ABI.md.
 */
#ifndef EKB_ABI_H
#define EKB_ABI_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#ifdef __cplusplus
#define EKB_EXTERN_C extern "C"
#else
#define EKB_EXTERN_C
#endif
#define EKB_EXPORT EKB_EXTERN_C __attribute__((visibility("default")))

/* Half-precision types travel as their bits, so that C, C++, CUDA and OpenCL agree on layout. */
typedef uint16_t ekb_f16;  /* IEEE 754 binary16 */
typedef uint16_t ekb_bf16; /* bfloat16: the high 16 bits of a binary32 */
typedef uint8_t ekb_bool;  /* 0 or 1 */

static inline float ekb_bits_to_f32(uint32_t u) {
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}
static inline uint32_t ekb_f32_to_bits(float f) {
  uint32_t u;
  memcpy(&u, &f, sizeof u);
  return u;
}

static inline float ekb_bf16_to_f32(ekb_bf16 h) { return ekb_bits_to_f32((uint32_t)h << 16); }
static inline ekb_bf16 ekb_f32_to_bf16(float f) { /* round to nearest even; NaN stays NaN */
  uint32_t u = ekb_f32_to_bits(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return (ekb_bf16)((u >> 16) | 0x40u);
  return (ekb_bf16)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}

static inline float ekb_f16_to_f32(ekb_f16 h) {
  uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1fu, man = h & 0x3ffu;
  if (exp == 0x1f) return ekb_bits_to_f32(sign | 0x7f800000u | (man << 13)); /* inf, nan */
  if (exp == 0) { /* zero or subnormal: man * 2^-24 */
    float v = (float)man * 5.9604644775390625e-08f;
    return sign ? -v : v;
  }
  return ekb_bits_to_f32(sign | ((exp + 112u) << 23) | (man << 13));
}
static inline ekb_f16 ekb_f32_to_f16(float f) { /* round to nearest even */
  uint32_t u = ekb_f32_to_bits(f);
  uint32_t sign = (u >> 16) & 0x8000u;
  uint32_t a = u & 0x7fffffffu;
  if (a > 0x7f800000u) return (ekb_f16)(sign | 0x7e00u);            /* nan */
  if (a >= 0x477ff000u) return (ekb_f16)(sign | 0x7c00u);           /* overflow to inf */
  if (a < 0x38800000u) {                                            /* subnormal or zero */
    float v = ekb_bits_to_f32(a) * 16777216.0f;                     /* scale by 2^24 */
    uint32_t m = (uint32_t)v;
    float rem = v - (float)m;
    if (rem > 0.5f || (rem == 0.5f && (m & 1u))) ++m;
    return (ekb_f16)(sign | m);
  }
  uint32_t r = a + 0xfffu + ((a >> 13) & 1u) - 0x38000000u;       /* rebias, round to even */
  return (ekb_f16)(sign | (r >> 13));
}

#endif /* EKB_ABI_H */
