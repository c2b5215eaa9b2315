/* Reference (portable C) widening of fp16 and bf16 values to fp32 (exact for every input) and rounding of fp32 to fp16. */
#include "kernels/cpu/ref/half.h"

#include <string.h>

/* The fp32 bits of one binary16 value; integer operations only, so no rounding mode or
 * flush-to-zero setting can change the result. */
static uint32_t f16_bits_to_f32_bits(uint16_t h) {
  const uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1fu;
  uint32_t man = h & 0x3ffu;
  if (exp == 0x1f) /* inf; NaN quieted, payload kept (as F16C's and NEON's conversions do) */
    return sign | 0x7f800000u | (man << 13) | (man ? 0x400000u : 0u);
  if (exp != 0) return sign | ((exp + 112u) << 23) | (man << 13);
  if (man == 0) return sign; /* signed zero */
  /* subnormal, man * 2^-24: shift the leading one into the implicit bit */
  exp = 113u;
  while (!(man & 0x400u)) {
    man <<= 1;
    --exp;
  }
  return sign | (exp << 23) | ((man & 0x3ffu) << 13);
}

void mace_f16_to_f32__ref(const uint16_t *in, float *out, int64_t begin, int64_t end) {
  for (int64_t i = begin; i < end; ++i) {
    uint32_t bits = f16_bits_to_f32_bits(in[i]);
    memcpy(&out[i], &bits, sizeof(bits));
  }
}

void mace_bf16_to_f32__ref(const uint16_t *in, float *out, int64_t begin, int64_t end) {
  for (int64_t i = begin; i < end; ++i) {
    uint32_t bits = (uint32_t)in[i] << 16;
    memcpy(&out[i], &bits, sizeof(bits));
  }
}

/* The binary16 bits nearest to the fp32 bits f (round to nearest, ties to even). */
static uint16_t f32_bits_to_f16_bits(uint32_t f) {
  const uint16_t sign = (uint16_t)((f >> 16) & 0x8000u);
  const uint32_t exp = (f >> 23) & 0xffu;
  uint32_t man = f & 0x7fffffu;
  if (exp == 0xff) return (uint16_t)(sign | 0x7c00u | (man ? 0x200u | (man >> 13) : 0u));
  const int32_t e = (int32_t)exp - 127 + 15;  /* the half's biased exponent */
  if (e >= 31) return (uint16_t)(sign | 0x7c00u);
  if (e <= 0) {
    if (e < -10) return sign;  /* below half the smallest subnormal */
    man |= 0x800000u;          /* the implicit one; the value is man * 2^(exp-150) */
    const uint32_t shift = (uint32_t)(14 - e);
    uint32_t h = man >> shift;
    const uint32_t rem = man & ((1u << shift) - 1u), half = 1u << (shift - 1u);
    if (rem > half || (rem == half && (h & 1u))) ++h;
    return (uint16_t)(sign | h);
  }
  uint32_t h = ((uint32_t)e << 10) | (man >> 13);
  const uint32_t rem = man & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (h & 1u))) ++h;  /* may carry into inf: correct */
  return (uint16_t)(sign | h);
}

void mace_f32_to_f16__ref(const float *in, uint16_t *out, int64_t begin, int64_t end) {
  for (int64_t i = begin; i < end; ++i) {
    uint32_t bits;
    memcpy(&bits, &in[i], sizeof(bits));
    out[i] = f32_bits_to_f16_bits(bits);
  }
}
