/* Reference (portable C) element-wise activations, f32. */
#include "kernels/cpu/ref/activation.h"

#include <math.h>

static inline float sigmoidf_(float x) {
  /* Split by sign so exp never overflows into inf/inf. */
  if (x >= 0.0f) {
    return 1.0f / (1.0f + expf(-x));
  }
  float e = expf(x);
  return e / (1.0f + e);
}

/* x * sigmoid(y) for the float y = alpha * x, in double: x * exp(y) stays normal down to
 * y = -91.8 where exp(y) alone is a float denormal. */
static inline float swishf_(float x, float alpha) {
  const float y = alpha * x;
  return (float)((double)x / (1.0 + exp(-(double)y)));
}

/* x * (1 + erf(x / sqrt(2))) / 2 as x * erfc(-x / sqrt(2)) / 2 in double: no cancellation
 * where erf(x / sqrt(2)) nears -1. Where erfc underflows (x below about -38), -0. */
static inline float geluf_(float x) {
  const double t = erfc(-(double)x * 0.70710678118654752440);
  return t > 0.0 ? (float)(0.5 * (double)x * t) : -0.0f;
}

/* x * (1 + tanh(u)) / 2 with u = sqrt(2 / pi) * (x + 0.044715 x^3), written as
 * x / (1 + exp(-2u)) in double: no cancellation where tanh(u) nears -1. */
static inline float gelu_tanhf_(float x) {
  const double d = (double)x;
  const double u = 0.79788456080286535588 * (d + 0.044715 * d * d * d);
  return (float)(d / (1.0 + exp(-2.0 * u)));
}

/* x * tanh(log(1 + exp(x))) in double; exp overflowing to inf gives tanh(inf) = 1. */
static inline float mishf_(float x) {
  const double d = (double)x;
  return (float)(d * tanh(log1p(exp(d))));
}

static inline float hardsigmoidf_(float x, float alpha, float beta) {
  float y = alpha * x + beta;
  return y < 0.0f ? 0.0f : (y > 1.0f ? 1.0f : y);
}

void mace_f32_activation__ref(const mace_activation *act, const float *in, float *out,
                              int64_t n) {
  const float alpha = act->alpha;
  const float beta = act->beta;
  int64_t i;
  switch (act->kind) {
    case MACE_ACT_NONE:
      if (in != out) {
        for (i = 0; i < n; ++i) out[i] = in[i];
      }
      break;
    case MACE_ACT_RELU:
      for (i = 0; i < n; ++i) out[i] = in[i] > 0.0f ? in[i] : 0.0f;
      break;
    case MACE_ACT_RELUX:
      for (i = 0; i < n; ++i) {
        float x = in[i] > 0.0f ? in[i] : 0.0f;
        out[i] = x < beta ? x : beta;
      }
      break;
    case MACE_ACT_LEAKYRELU:
      for (i = 0; i < n; ++i) out[i] = in[i] >= 0.0f ? in[i] : alpha * in[i];
      break;
    case MACE_ACT_SIGMOID:
      for (i = 0; i < n; ++i) out[i] = sigmoidf_(in[i]);
      break;
    case MACE_ACT_TANH:
      for (i = 0; i < n; ++i) out[i] = tanhf(in[i]);
      break;
    case MACE_ACT_HARDSIGMOID:
      for (i = 0; i < n; ++i) out[i] = hardsigmoidf_(in[i], alpha, beta);
      break;
    case MACE_ACT_HARDSWISH:
      for (i = 0; i < n; ++i) out[i] = in[i] * hardsigmoidf_(in[i], 1.0f / 6.0f, 0.5f);
      break;
    case MACE_ACT_ELU:
      for (i = 0; i < n; ++i) out[i] = in[i] >= 0.0f ? in[i] : alpha * expm1f(in[i]);
      break;
    case MACE_ACT_SWISH:
      for (i = 0; i < n; ++i) out[i] = swishf_(in[i], alpha);
      break;
    case MACE_ACT_GELU:
      for (i = 0; i < n; ++i) out[i] = geluf_(in[i]);
      break;
    case MACE_ACT_GELU_TANH:
      for (i = 0; i < n; ++i) out[i] = gelu_tanhf_(in[i]);
      break;
    case MACE_ACT_MISH:
      for (i = 0; i < n; ++i) out[i] = mishf_(in[i]);
      break;
  }
}
