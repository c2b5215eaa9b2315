/* Reference (portable C) widening of fp16 and bf16 values to fp32, exact for every input. */
#include "kernels/cpu/ref/half.h"

#include <string.h>

/* The fp32 bits of one binary16 value; integer operations only, so no rounding mode or
 * flush-to-zero setting can change the result. */
static uint32_t f16_bits_to_f32_bits(uint16_t h) {
  const uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1fu;
  uint32_t man = h & 0x3ffu;
  if (exp == 0x1f) return sign | 0x7f800000u | (man << 13); /* inf, NaN */
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
