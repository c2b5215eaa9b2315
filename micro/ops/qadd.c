/* QLinearAdd i8 with broadcasting over 4 dims (the full engine's formulas, narrow and wide). */
#include "mace_micro_ops.h"
#include "kernels/cpu/ref/qlinear_eltwise.h" /* mace_qadd16, mace_requant_scale */

mace_micro_status mace_micro_op_qadd_i8(const void *params, const void *x0, const void *x1,
                                        void *y) {
  const mace_micro_qadd *p = (const mace_micro_qadd *)params;
  const int8_t *a = (const int8_t *)x0, *b = (const int8_t *)x1;
  int8_t *out = (int8_t *)y;
  int32_t i0, i1, i2, i3;
  const int32_t bias =
      p->s16 > 0 ? mace_qadd16_bias(p->m16_a, p->a_zp, p->m16_b, p->b_zp, p->y_zp, p->s16) : 0;
  if (b == 0) return MACE_MICRO_INVALID_MODEL;
  if (p->s16 < 0 || p->s16 > MACE_QADD16_MAX_SHIFT) return MACE_MICRO_INVALID_MODEL;
  for (i0 = 0; i0 < p->dims[0]; ++i0)
    for (i1 = 0; i1 < p->dims[1]; ++i1)
      for (i2 = 0; i2 < p->dims[2]; ++i2) {
        const int8_t *ar = a + i0 * p->a_strides[0] + i1 * p->a_strides[1] + i2 * p->a_strides[2];
        const int8_t *br = b + i0 * p->b_strides[0] + i1 * p->b_strides[1] + i2 * p->b_strides[2];
        for (i3 = 0; i3 < p->dims[3]; ++i3) {
          const int32_t qa = ar[i3 * p->a_strides[3]], qb = br[i3 * p->b_strides[3]];
          int32_t acc;
          if (p->s16 > 0) {
            *out++ = (int8_t)mace_qadd16(qa, qb, p->m16_a, p->m16_b, bias, p->s16, p->lo, p->hi);
            continue;
          }
          acc = mace_requant_scale((int32_t)((uint32_t)(qa - p->a_zp) << MACE_QADD_LEFT_SHIFT),
                                   p->a_mult, p->a_shift) +
                mace_requant_scale((int32_t)((uint32_t)(qb - p->b_zp) << MACE_QADD_LEFT_SHIFT),
                                   p->b_mult, p->b_shift);
          *out++ = (int8_t)mace_requant(acc, p->y_mult, p->y_shift, p->y_zp, p->lo, p->hi);
        }
      }
  return MACE_MICRO_OK;
}
