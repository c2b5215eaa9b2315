/* Activation f32: y[i] = act(x[i]) (RELU, RELUX, LEAKYRELU, SIGMOID, TANH, HARDSIGMOID, ...). */
#include "mace_micro_ops.h"
#include "act.h"

mace_micro_status mace_micro_op_activation_f32(const void *params, const void *x0,
                                               const void *x1, void *y) {
  const mace_micro_activation *p = (const mace_micro_activation *)params;
  const float *x = (const float *)x0;
  float *out = (float *)y;
  int32_t i;
  (void)x1;
  if (p->n < 0) return MACE_MICRO_INVALID_MODEL;
  for (i = 0; i < p->n; ++i) out[i] = mace_micro_act_apply(&p->act, x[i]);
  return MACE_MICRO_OK;
}
