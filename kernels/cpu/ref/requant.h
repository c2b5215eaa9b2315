/* Fixed-point requantization of int32 accumulators to u8/i8 (docs/int8.md): the one formula
 * every int8 kernel, reference and SIMD, computes bit for bit. */
#ifndef MACE_KERNELS_CPU_REF_REQUANT_H_
#define MACE_KERNELS_CPU_REF_REQUANT_H_

#include <math.h>
#include <stdint.h>

#define MACE_REQUANT_T_MAX 65536 /* |t| is clamped to this before the zero point is added */

/* A real multiplier M >= 0 as mult * 2^(-31 - shift), mult in [2^30, 2^31): shift > 0 is a
 * right shift after the multiply, shift < 0 a left shift of the accumulator before it.
 * M too small to represent (shift > 31) gives mult = 0 (every output = the zero point), so
 * SIMD kernels shift 32-bit lanes by at most 31. */
static inline void mace_requant_params(double m, int32_t *mult, int32_t *shift) {
  int e = 0;
  double q;
  int64_t qi;
  if (!(m > 0.0)) {
    *mult = 0;
    *shift = 0;
    return;
  }
  q = frexp(m, &e); /* m = q * 2^e, q in [0.5, 1) */
  qi = (int64_t)llround(q * 2147483648.0);
  if (qi == ((int64_t)1 << 31)) {
    qi /= 2;
    e += 1;
  }
  if (-e > 31 || e > 30) { /* underflow; overflow (M >= 2^30) is not a real scale either */
    *mult = 0;
    *shift = 0;
    return;
  }
  *mult = (int32_t)qi;
  *shift = -e;
}

/* requant(acc) + zp clamped to [lo, hi] (docs/int8.md, "Requantization"). */
static inline int32_t mace_requant(int32_t acc, int32_t mult, int32_t shift, int32_t zp,
                                   int32_t lo, int32_t hi) {
  int left = shift < 0 ? -shift : 0, right = shift > 0 ? shift : 0;
  int32_t x = (int32_t)((uint32_t)acc << left);
  int64_t t = ((int64_t)x * mult + ((int64_t)1 << 30)) >> 31;
  if (right > 0) t = (t >> right) + ((t >> (right - 1)) & 1);
  if (t > MACE_REQUANT_T_MAX) t = MACE_REQUANT_T_MAX;
  if (t < -MACE_REQUANT_T_MAX) t = -MACE_REQUANT_T_MAX;
  t += zp;
  return (int32_t)(t < lo ? lo : (t > hi ? hi : t));
}

#endif /* MACE_KERNELS_CPU_REF_REQUANT_H_ */
