/* FullyConnected f32: y = act(x * w^T + bias), w [n, k] row-major. */
#include "mace_micro_ops.h"
#include "act.h"

mace_micro_status mace_micro_op_fully_connected_f32(const void *params, const void *x0,
                                                    const void *x1, void *y) {
  const mace_micro_fc *p = (const mace_micro_fc *)params;
  const float *x = (const float *)x0;
  float *out = (float *)y;
  int32_t b, n, k;
  (void)x1;
  if (p->batch <= 0 || p->k <= 0 || p->n <= 0 || p->w == 0) return MACE_MICRO_INVALID_MODEL;
  for (b = 0; b < p->batch; ++b) {
    const float *xb = x + b * p->k;
    for (n = 0; n < p->n; ++n) {
      const float *wn = p->w + n * p->k;
      float acc = 0.0f;
      for (k = 0; k < p->k; ++k) acc += xb[k] * wn[k];
      out[b * p->n + n] = mace_micro_act_apply(&p->act, acc + (p->bias ? p->bias[n] : 0.0f));
    }
  }
  return MACE_MICRO_OK;
}
