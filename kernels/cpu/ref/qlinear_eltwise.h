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

/* The multipliers and zero points of one QLinearAdd / QLinearMul; lo and hi the output's
 * range narrowed by the fused activation. Add uses every field, Mul y_* and the zero points. */
typedef struct mace_qbinary_params {
  int32_t a_zp, b_zp, y_zp, lo, hi;
  int32_t a_mult, a_shift, b_mult, b_shift; /* Add: a, b onto the common scale */
  int32_t y_mult, y_shift;                  /* the output requantization */
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

/* Fills p for QLinearAdd (add = 1) or QLinearMul (add = 0) from the real scales:
 *   Add:  s = 2 * max(a_scale, b_scale); a: M = a_scale / s, b: M = b_scale / s,
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
  } else {
    p->a_mult = p->a_shift = p->b_mult = p->b_shift = 0;
    mace_requant_params(a_scale * b_scale / y_scale, &p->y_mult, &p->y_shift);
  }
}

/* Output elements [begin, end) (flat indices of the broadcast `shape`):
 *   Add: y = requant(scale_a((a - a_zp) << 20) + scale_b((b - b_zp) << 20))
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
