/* Softmax f32 along one axis: y = exp(x - max) / sum(exp(x - max)). */
#include <math.h>

#include "mace_micro_ops.h"

mace_micro_status mace_micro_op_softmax_f32(const void *params, const void *x0, const void *x1,
                                            void *y) {
  const mace_micro_softmax *p = (const mace_micro_softmax *)params;
  int32_t o, i, k;
  (void)x1;
  if (p->outer <= 0 || p->len <= 0 || p->inner <= 0) return MACE_MICRO_INVALID_MODEL;
  for (o = 0; o < p->outer; ++o) {
    for (i = 0; i < p->inner; ++i) {
      const float *x = (const float *)x0 + o * p->len * p->inner + i;
      float *out = (float *)y + o * p->len * p->inner + i;
      float mx = x[0], sum = 0.0f, inv;
      for (k = 1; k < p->len; ++k) mx = x[k * p->inner] > mx ? x[k * p->inner] : mx;
      for (k = 0; k < p->len; ++k) {
        const float e = expf(x[k * p->inner] - mx);
        out[k * p->inner] = e;
        sum += e;
      }
      inv = 1.0f / sum;
      for (k = 0; k < p->len; ++k) out[k * p->inner] *= inv;
    }
  }
  return MACE_MICRO_OK;
}
