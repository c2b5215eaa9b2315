/* Reference (portable C) element-wise f32 math with parameters: extra activations and trig. */
#include "kernels/cpu/ref/unary_math.h"

#include <math.h>

#define UM_LOOP(EXPR)                          \
  for (int64_t i = begin; i < end; ++i) {      \
    const float x = in[i];                     \
    out[i] = (EXPR);                           \
  }                                            \
  break;

void mace_f32_unary_math__ref(mace_unary_math_type type, const mace_unary_math_params *p,
                              const float *in, float *out, int64_t begin, int64_t end) {
  const float alpha = p->alpha, gamma = p->gamma, bias = p->bias, lambd = p->lambd;
  switch (type) {
    case MACE_UNARY_SELU:
      UM_LOOP(x > 0.0f ? gamma * x : gamma * alpha * expm1f(x))
    case MACE_UNARY_CELU:
      UM_LOOP((x > 0.0f ? x : 0.0f) + fminf(0.0f, alpha * expm1f(x / alpha)))
    case MACE_UNARY_THRESHOLDED_RELU:
      UM_LOOP(x > alpha ? x : 0.0f)
    case MACE_UNARY_SHRINK:
      UM_LOOP(x < -lambd ? x + bias : (x > lambd ? x - bias : 0.0f))
    case MACE_UNARY_SWISH:
      UM_LOOP(x / (1.0f + expf(-alpha * x)))
    case MACE_UNARY_TAN:
      UM_LOOP(tanf(x))
    case MACE_UNARY_ASIN:
      UM_LOOP(asinf(x))
    case MACE_UNARY_ACOS:
      UM_LOOP(acosf(x))
    case MACE_UNARY_ATAN:
      UM_LOOP(atanf(x))
    case MACE_UNARY_SINH:
      UM_LOOP(sinhf(x))
    case MACE_UNARY_COSH:
      UM_LOOP(coshf(x))
    case MACE_UNARY_ASINH:
      UM_LOOP(asinhf(x))
    case MACE_UNARY_ACOSH:
      UM_LOOP(acoshf(x))
    case MACE_UNARY_ATANH:
      UM_LOOP(atanhf(x))
  }
}
