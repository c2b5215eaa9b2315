/* The activations beyond a clamp (formulas as the full engine's kernels/cpu/ref/activation.c),
 * one function each so that the linker keeps only those a model names. */
#include <math.h>

#include "mace_micro_ops.h"

float mace_micro_act_leakyrelu(const mace_micro_act *a, float x) {
  return x >= 0.0f ? x : a->alpha * x;
}

float mace_micro_act_sigmoid(const mace_micro_act *a, float x) {
  float e;
  (void)a;
  if (x >= 0.0f) return 1.0f / (1.0f + expf(-x)); /* split by sign: exp never overflows */
  e = expf(x);
  return e / (1.0f + e);
}

float mace_micro_act_tanh(const mace_micro_act *a, float x) {
  (void)a;
  return tanhf(x);
}

float mace_micro_act_hardsigmoid(const mace_micro_act *a, float x) {
  const float y = a->alpha * x + a->beta;
  return y < 0.0f ? 0.0f : (y > 1.0f ? 1.0f : y);
}

float mace_micro_act_hardswish(const mace_micro_act *a, float x) {
  const float y = x * (1.0f / 6.0f) + 0.5f;
  (void)a;
  return x * (y < 0.0f ? 0.0f : (y > 1.0f ? 1.0f : y));
}

float mace_micro_act_elu(const mace_micro_act *a, float x) {
  return x >= 0.0f ? x : a->alpha * expm1f(x);
}
