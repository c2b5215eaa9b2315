/* Reference (portable C) int8/uint8 QLinearAdd, QLinearMul and the rescaling copy of
 * QLinearConcat: exact integer arithmetic with fixed-point requantization (docs/int8.md). */
#ifndef MACE_KERNELS_CPU_REF_QLINEAR_ELTWISE_H_
#define MACE_KERNELS_CPU_REF_QLINEAR_ELTWISE_H_

#include <stdint.h>

#include "kernels/cpu/ref/eltwise.h"
#include "kernels/cpu/ref/requant.h"

/* QLinearAdd's common fixed point: each input's (q - zp) is shifted left by this many bits
 * before its own multiplier brings it onto the common scale 2 * max(a_scale, b_scale) / 2^20
 * (TFLite's left_shift = 20). |q - zp| <= 255, so (q - zp) << 20 < 2^28 and the sum of two
 * rescaled inputs (each at most half of that) fits int32. */
#define MACE_QADD_LEFT_SHIFT 20

/* QLinearAdd's narrow form (below): the shifts it may use. At the lowest its error before
 * rounding stays under half an output unit; at the highest its int32 sums stay under 2^29. */
#define MACE_QADD16_MIN_SHIFT 9
#define MACE_QADD16_MAX_SHIFT 20

/* The multipliers and zero points of one QLinearAdd / QLinearMul; lo and hi the output's
 * range narrowed by the fused activation. Add uses the zero points and either its narrow form
 * (s16 > 0: a_m16, b_m16, s16) or its wide one (a_*, b_*, y_*); Mul y_* and the zero points. */
typedef struct mace_qbinary_params {
  int32_t a_zp, b_zp, y_zp, lo, hi;
  int32_t a_mult, a_shift, b_mult, b_shift; /* Add, wide: a, b onto the common scale */
  int32_t y_mult, y_shift;                  /* the output requantization (Add: wide) */
  int32_t a_m16, b_m16, s16;                /* Add, narrow: a_scale / y_scale = a_m16 * 2^-s16,
                                               b's alike; s16 0: the wide form */
} mace_qbinary_params;

/* x * M (M = mult * 2^(-31 - shift), mace_requant_params) with requant.h's rounding (the
 * rounding doubling high multiply, then round half up), without the clamp of |t| to
 * MACE_REQUANT_T_MAX and without a zero point: QLinearAdd's input rescaling, whose results
 * go up to 2^27. */
static inline int32_t mace_requant_scale(int32_t acc, int32_t mult, int32_t shift) {
  int left = shift < 0 ? -shift : 0, right = shift > 0 ? shift : 0;
  int32_t x = (int32_t)((uint32_t)acc << left);
  int64_t t = ((int64_t)x * mult + ((int64_t)1 << 30)) >> 31;
  if (right > 0) t = (t >> right) + ((t >> (right - 1)) & 1);
  return (int32_t)t;
}

/* mult * 2^(s - 31 - shift) rounded half up: a multiplier of mace_requant_params (M = mult *
 * 2^(-31 - shift)) as an integer at 2^-s; exact integer arithmetic, 0 when M * 2^s < 1/2. */
static inline int64_t mace_qadd16_multiplier(int32_t mult, int32_t shift, int s) {
  const int r = 31 + shift - s;
  if (mult == 0 || r > 62) return 0;
  if (r <= 0) return (int64_t)mult << -r; /* not reached for M < 2^15 (r >= 16 there) */
  return ((int64_t)mult + ((int64_t)1 << (r - 1))) >> r;
}

/* QLinearAdd's narrow form: M_a = a_scale / y_scale and M_b = b_scale / y_scale (each split by
 * mace_requant_params), s the largest shift in [MACE_QADD16_MIN_SHIFT, MACE_QADD16_MAX_SHIFT]
 * at which both are at most 32767 (mace_qadd16_multiplier); s16 = 0 where there is none (an
 * input scale at least 64 times the output's: the wide form). */
static inline void mace_qadd16_params(mace_qbinary_params *p, double a_scale, double b_scale,
                                      double y_scale) {
  int32_t am, ash, bm, bsh;
  p->a_m16 = p->b_m16 = p->s16 = 0;
  /* from 64 on no shift of 9 or more fits (from 2^30 on there is no multiplier at all) */
  if (!(a_scale / y_scale < 64.0) || !(b_scale / y_scale < 64.0)) return;
  mace_requant_params(a_scale / y_scale, &am, &ash);
  mace_requant_params(b_scale / y_scale, &bm, &bsh);
  for (int s = MACE_QADD16_MAX_SHIFT; s >= MACE_QADD16_MIN_SHIFT; --s) {
    const int64_t ma = mace_qadd16_multiplier(am, ash, s), mb = mace_qadd16_multiplier(bm, bsh, s);
    if (ma <= 32767 && mb <= 32767) {
      p->a_m16 = (int32_t)ma;
      p->b_m16 = (int32_t)mb;
      p->s16 = s;
      return;
    }
  }
}

/* Fills p for QLinearAdd (add = 1) or QLinearMul (add = 0) from the real scales:
 *   Add:  the narrow form's a_m16, b_m16, s16 (mace_qadd16_params); the wide form's
 *         s = 2 * max(a_scale, b_scale); a: M = a_scale / s, b: M = b_scale / s,
 *         y: M = s / (2^20 * y_scale);
 *   Mul:  y: M = a_scale * b_scale / y_scale.
 * Each M is computed in double and split by mace_requant_params. */
static inline void mace_qbinary_params_init(mace_qbinary_params *p, int add, double a_scale,
                                            double b_scale, double y_scale) {
  if (add) {
    const double s = 2.0 * (a_scale > b_scale ? a_scale : b_scale);
    mace_requant_params(a_scale / s, &p->a_mult, &p->a_shift);
    mace_requant_params(b_scale / s, &p->b_mult, &p->b_shift);
    mace_requant_params(s / ((double)(1 << MACE_QADD_LEFT_SHIFT) * y_scale), &p->y_mult,
                        &p->y_shift);
    mace_qadd16_params(p, a_scale, b_scale, y_scale);
  } else {
    p->a_mult = p->a_shift = p->b_mult = p->b_shift = 0;
    p->a_m16 = p->b_m16 = p->s16 = 0;
    mace_requant_params(a_scale * b_scale / y_scale, &p->y_mult, &p->y_shift);
  }
}

/* The narrow form's constant: 2^(s-1) - m_a * a_zp - m_b * b_zp + y_zp * 2^s (the rounding,
 * both zero points and the output's, folded into one addend). */
static inline int32_t mace_qadd16_bias(int32_t a_m16, int32_t a_zp, int32_t b_m16, int32_t b_zp,
                                       int32_t y_zp, int32_t s16) {
  return (int32_t)(((int32_t)1 << (s16 - 1)) - a_m16 * a_zp - b_m16 * b_zp +
                   (int32_t)((uint32_t)y_zp << s16));
}

/* One output of QLinearAdd's narrow form: (m_a * a + m_b * b + bias) >> s, clamped to [lo, hi]
 * (bias: mace_qadd16_bias; >> is arithmetic, flooring). Every term is below 2^29 in size. */
static inline int32_t mace_qadd16(int32_t qa, int32_t qb, int32_t a_m16, int32_t b_m16,
                                  int32_t bias, int32_t s16, int32_t lo, int32_t hi) {
  const int32_t t = (a_m16 * qa + b_m16 * qb + bias) >> s16;
  return t < lo ? lo : (t > hi ? hi : t);
}

/* Output elements [begin, end) (flat indices of the broadcast `shape`):
 *   Add, narrow (s16 > 0): y = mace_qadd16(a, b, ...) (mace_qadd16_params);
 *   Add, wide: y = requant(scale_a((a - a_zp) << 20) + scale_b((b - b_zp) << 20))
 *        (scale_* = mace_requant_scale with the input's multiplier; requant = mace_requant
 *        with y_mult, y_shift, y_zp, lo, hi);
 *   Mul: y = requant((a - a_zp) * (b - b_zp)). */
void mace_u8_qlinear_add__ref(const mace_eltwise_shape *shape, const mace_qbinary_params *p,
                              const uint8_t *a, const uint8_t *b, uint8_t *y, int64_t begin,
                              int64_t end);
void mace_s8_qlinear_add__ref(const mace_eltwise_shape *shape, const mace_qbinary_params *p,
                              const int8_t *a, const int8_t *b, int8_t *y, int64_t begin,
                              int64_t end);
void mace_u8_qlinear_mul__ref(const mace_eltwise_shape *shape, const mace_qbinary_params *p,
                              const uint8_t *a, const uint8_t *b, uint8_t *y, int64_t begin,
                              int64_t end);
void mace_s8_qlinear_mul__ref(const mace_eltwise_shape *shape, const mace_qbinary_params *p,
                              const int8_t *a, const int8_t *b, int8_t *y, int64_t begin,
                              int64_t end);

/* y[i] = mace_requant(x[i] - x_zp, mult, shift, y_zp, lo, hi) for i in [begin, end): one
 * quantized tensor moved onto another scale and zero point (QLinearConcat's inputs,
 * M = x_scale / y_scale). */
void mace_u8_requant_copy__ref(const uint8_t *x, int32_t x_zp, int32_t mult, int32_t shift,
                               int32_t y_zp, uint8_t *y, int64_t begin, int64_t end);
void mace_s8_requant_copy__ref(const int8_t *x, int32_t x_zp, int32_t mult, int32_t shift,
                               int32_t y_zp, int8_t *y, int64_t begin, int64_t end);

#endif /* MACE_KERNELS_CPU_REF_QLINEAR_ELTWISE_H_ */
