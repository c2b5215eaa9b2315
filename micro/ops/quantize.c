/* Quantize f32 -> i8: y = clamp(rint(x / scale) + zp, -128, 127), as the full engine's reference. */
#include <math.h>

#include "mace_micro_ops.h"

mace_micro_status mace_micro_op_quantize_i8(const void *params, const void *x0, const void *x1,
                                            void *y) {
  const mace_micro_quantize *p = (const mace_micro_quantize *)params;
  const float *x = (const float *)x0;
  int8_t *out = (int8_t *)y;
  int32_t i;
  (void)x1;
  if (p->n < 0 || !(p->scale > 0.0f)) return MACE_MICRO_INVALID_MODEL;
  for (i = 0; i < p->n; ++i) {
    float v = x[i] / p->scale; /* one f32 division, as onnxruntime and the engine */
    int32_t q;
    if (isnan(v)) {
      q = -128;
    } else {
      v = rintf(v); /* half to even in the default rounding mode */
      if (v < (float)(-128 - p->zp)) q = -128;
      else if (v > (float)(127 - p->zp)) q = 127;
      else q = (int32_t)v + p->zp;
    }
    out[i] = (int8_t)q;
  }
  return MACE_MICRO_OK;
}
