/* Eltwise f32: ADD, SUB, PROD, MIN, MAX of two tensors broadcast over 4 dims, fused activation. */
#include "mace_micro_ops.h"
#include "act.h"

static float eltwise_apply(int32_t type, float a, float b) {
  switch (type) {
    case MACE_MICRO_ELTWISE_SUB: return a - b;
    case MACE_MICRO_ELTWISE_PROD: return a * b;
    case MACE_MICRO_ELTWISE_MIN: return a < b ? a : b;
    case MACE_MICRO_ELTWISE_MAX: return a > b ? a : b;
    default: return a + b;
  }
}

mace_micro_status mace_micro_op_eltwise_f32(const void *params, const void *x0, const void *x1,
                                            void *y) {
  const mace_micro_eltwise *p = (const mace_micro_eltwise *)params;
  const float *a = (const float *)x0, *b = (const float *)x1;
  float *out = (float *)y;
  int32_t i0, i1, i2, i3;
  if (b == 0 || p->type < MACE_MICRO_ELTWISE_ADD || p->type > MACE_MICRO_ELTWISE_MAX)
    return MACE_MICRO_INVALID_MODEL;
  for (i0 = 0; i0 < p->dims[0]; ++i0)
    for (i1 = 0; i1 < p->dims[1]; ++i1)
      for (i2 = 0; i2 < p->dims[2]; ++i2) {
        const float *ar = a + i0 * p->a_strides[0] + i1 * p->a_strides[1] + i2 * p->a_strides[2];
        const float *br = b + i0 * p->b_strides[0] + i1 * p->b_strides[1] + i2 * p->b_strides[2];
        for (i3 = 0; i3 < p->dims[3]; ++i3)
          *out++ = mace_micro_act_apply(
              &p->act, eltwise_apply(p->type, ar[i3 * p->a_strides[3]], br[i3 * p->b_strides[3]]));
      }
  return MACE_MICRO_OK;
}
