/* The f32 activations of MACE Micro, applied in each op's output write (mace_micro_act). */
#ifndef MACE_MICRO_OPS_ACT_H_
#define MACE_MICRO_OPS_ACT_H_

#include <math.h>

#include "mace_micro_ops.h"

static inline float mace_micro_sigmoidf(float x) {
  float e;
  if (x >= 0.0f) return 1.0f / (1.0f + expf(-x)); /* split by sign: exp never overflows */
  e = expf(x);
  return e / (1.0f + e);
}

static inline float mace_micro_hardsigmoidf(float x, float alpha, float beta) {
  const float y = alpha * x + beta;
  return y < 0.0f ? 0.0f : (y > 1.0f ? 1.0f : y);
}

static inline float mace_micro_act_apply(const mace_micro_act *a, float x) {
  float r;
  switch (a->kind) {
    case MACE_MICRO_ACT_RELU:
      return x < 0.0f ? 0.0f : x;
    case MACE_MICRO_ACT_RELUX:
      r = x < 0.0f ? 0.0f : x;
      return r > a->beta ? a->beta : r;
    case MACE_MICRO_ACT_LEAKYRELU:
      return x >= 0.0f ? x : a->alpha * x;
    case MACE_MICRO_ACT_SIGMOID:
      return mace_micro_sigmoidf(x);
    case MACE_MICRO_ACT_TANH:
      return tanhf(x);
    case MACE_MICRO_ACT_HARDSIGMOID:
      return mace_micro_hardsigmoidf(x, a->alpha, a->beta);
    case MACE_MICRO_ACT_HARDSWISH:
      return x * mace_micro_hardsigmoidf(x, 1.0f / 6.0f, 0.5f);
    case MACE_MICRO_ACT_ELU:
      return x >= 0.0f ? x : a->alpha * expm1f(x);
    default:
      return x;
  }
}

#endif /* MACE_MICRO_OPS_ACT_H_ */
