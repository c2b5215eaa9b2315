/* Reference (portable C) int8/uint8 QLinearAdd, QLinearMul and the requantizing copy. */
#include "kernels/cpu/ref/qlinear_eltwise.h"

#include "kernels/cpu/qeltwise.h"
#include "kernels/cpu/ref/bcast_iter.h"

#define QLINEAR_BINARY(SPEC, NAME, T, EXPR)                                                   \
  SPEC void NAME(const mace_eltwise_shape *shape, const mace_qbinary_params *p, const T *a,   \
            const T *b, T *y, int64_t begin, int64_t end) {                                   \
    MACE_BCAST2_FOR(shape, begin, end, {                                                      \
      const int32_t da = (int32_t)a[ia] - p->a_zp, db = (int32_t)b[ib] - p->b_zp;             \
      y[o] = (T)mace_requant(EXPR, p->y_mult, p->y_shift, p->y_zp, p->lo, p->hi);             \
    });                                                                                       \
  }

/* QLinearAdd: the narrow form where the scales allow it, else the wide one (EXPR QADD_ACC). */
#define QLINEAR_ADD(NAME, WIDE, T)                                                            \
  QLINEAR_BINARY(static, WIDE, T, QADD_ACC)                                                   \
  void NAME(const mace_eltwise_shape *shape, const mace_qbinary_params *p, const T *a,        \
            const T *b, T *y, int64_t begin, int64_t end) {                                   \
    if (p->s16 == 0) {                                                                        \
      WIDE(shape, p, a, b, y, begin, end);                                                    \
      return;                                                                                 \
    }                                                                                         \
    {                                                                                         \
      const int32_t bias =                                                                    \
          mace_qadd16_bias(p->a_m16, p->a_zp, p->b_m16, p->b_zp, p->y_zp, p->s16);            \
      MACE_BCAST2_FOR(shape, begin, end, {                                                    \
        y[o] = (T)mace_qadd16(a[ia], b[ib], p->a_m16, p->b_m16, bias, p->s16, p->lo, p->hi);  \
      });                                                                                     \
    }                                                                                         \
  }

#define QADD_ACC                                                                              \
  (mace_requant_scale((int32_t)((uint32_t)da << MACE_QADD_LEFT_SHIFT), p->a_mult,             \
                      p->a_shift) +                                                           \
   mace_requant_scale((int32_t)((uint32_t)db << MACE_QADD_LEFT_SHIFT), p->b_mult, p->b_shift))

QLINEAR_ADD(mace_u8_qlinear_add__ref, u8_qadd_wide, uint8_t)
QLINEAR_ADD(mace_s8_qlinear_add__ref, s8_qadd_wide, int8_t)
QLINEAR_BINARY(, mace_u8_qlinear_mul__ref, uint8_t, da * db)
QLINEAR_BINARY(, mace_s8_qlinear_mul__ref, int8_t, da * db)

void mace_u8_requant_copy__ref(const uint8_t *x, int32_t x_zp, int32_t mult, int32_t shift,
                               int32_t y_zp, uint8_t *y, int64_t begin, int64_t end) {
  for (int64_t i = begin; i < end; ++i)
    y[i] = (uint8_t)mace_requant((int32_t)x[i] - x_zp, mult, shift, y_zp, 0, 255);
}

void mace_s8_requant_copy__ref(const int8_t *x, int32_t x_zp, int32_t mult, int32_t shift,
                               int32_t y_zp, int8_t *y, int64_t begin, int64_t end) {
  for (int64_t i = begin; i < end; ++i)
    y[i] = (int8_t)mace_requant((int32_t)x[i] - x_zp, mult, shift, y_zp, -128, 127);
}

/* The run kernels of kernels/cpu/qeltwise.h, scalar. */
#define Q8_RUN(NAME, T)                                                                       \
  static void NAME(const mace_qbinary_params *p, int add, const T *a, int64_t a_inc,          \
                   const T *b, int64_t b_inc, T *y, int64_t n) {                              \
    if (add && p->s16) {                                                                      \
      const int32_t bias =                                                                    \
          mace_qadd16_bias(p->a_m16, p->a_zp, p->b_m16, p->b_zp, p->y_zp, p->s16);            \
      for (int64_t i = 0; i < n; ++i)                                                         \
        y[i] = (T)mace_qadd16(a[i * a_inc], b[i * b_inc], p->a_m16, p->b_m16, bias, p->s16,   \
                              p->lo, p->hi);                                                  \
      return;                                                                                 \
    }                                                                                         \
    for (int64_t i = 0; i < n; ++i) {                                                         \
      const int32_t qa = a[i * a_inc], qb = b[i * b_inc];                                     \
      const int32_t acc = add ? mace_q8_add_input(qa, p->a_zp, p->a_mult, p->a_shift) +       \
                                    mace_q8_add_input(qb, p->b_zp, p->b_mult, p->b_shift)     \
                              : (qa - p->a_zp) * (qb - p->b_zp);                              \
      y[i] = (T)mace_requant(acc, p->y_mult, p->y_shift, p->y_zp, p->lo, p->hi);              \
    }                                                                                         \
  }
Q8_RUN(q8_run_u8, uint8_t)
Q8_RUN(q8_run_s8, int8_t)

void mace_q8_add__ref(const mace_qbinary_params *p, int is_signed, const uint8_t *a,
                      int64_t a_inc, const uint8_t *b, int64_t b_inc, uint8_t *y, int64_t n) {
  if (is_signed)
    q8_run_s8(p, 1, (const int8_t *)a, a_inc, (const int8_t *)b, b_inc, (int8_t *)y, n);
  else
    q8_run_u8(p, 1, a, a_inc, b, b_inc, y, n);
}

void mace_q8_mul__ref(const mace_qbinary_params *p, int is_signed, const uint8_t *a,
                      int64_t a_inc, const uint8_t *b, int64_t b_inc, uint8_t *y, int64_t n) {
  if (is_signed)
    q8_run_s8(p, 0, (const int8_t *)a, a_inc, (const int8_t *)b, b_inc, (int8_t *)y, n);
  else
    q8_run_u8(p, 0, a, a_inc, b, b_inc, y, n);
}
