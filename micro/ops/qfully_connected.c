/* QLinearMatMul with a constant B as an i8 fully connected layer: per-column requantization. */
#include "mace_micro_ops.h"
#include "requant.h"

mace_micro_status mace_micro_op_qfully_connected_i8(const void *params, const void *x0,
                                                    const void *x1, void *y) {
  const mace_micro_qfc *p = (const mace_micro_qfc *)params;
  const int8_t *x = (const int8_t *)x0;
  int8_t *out = (int8_t *)y;
  int32_t b, n, k;
  (void)x1;
  if (p->batch <= 0 || p->k <= 0 || p->n <= 0 || p->w == 0 || p->rq.mult == 0 ||
      p->rq.shift == 0)
    return MACE_MICRO_INVALID_MODEL;
  for (b = 0; b < p->batch; ++b) {
    const int8_t *xb = x + b * p->k;
    for (n = 0; n < p->n; ++n) {
      const int8_t *wn = p->w + n * p->k;
      int32_t acc = p->bias ? p->bias[n] : 0;
      for (k = 0; k < p->k; ++k) acc += ((int32_t)xb[k] - p->x_zp) * (int32_t)wn[k];
      out[b * p->n + n] = mace_micro_requant_apply(acc, &p->rq, n);
    }
  }
  return MACE_MICRO_OK;
}
