/* Dequantize i8 -> f32: y = (x - zp) * scale. */
#include "mace_micro_ops.h"

mace_micro_status mace_micro_op_dequantize_i8(const void *params, const void *x0,
                                              const void *x1, void *y) {
  const mace_micro_dequantize *p = (const mace_micro_dequantize *)params;
  const int8_t *x = (const int8_t *)x0;
  float *out = (float *)y;
  int32_t i;
  (void)x1;
  if (p->n < 0) return MACE_MICRO_INVALID_MODEL;
  for (i = 0; i < p->n; ++i) out[i] = (float)((int32_t)x[i] - p->zp) * p->scale;
  return MACE_MICRO_OK;
}
