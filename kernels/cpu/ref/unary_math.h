/* Reference (portable C) element-wise f32 math with parameters: extra activations and trig. */
#ifndef MACE_KERNELS_CPU_REF_UNARY_MATH_H_
#define MACE_KERNELS_CPU_REF_UNARY_MATH_H_

#include <stdint.h>

typedef enum mace_unary_math_type {
  MACE_UNARY_SELU = 0,             /* x > 0 ? gamma x : gamma alpha (e^x - 1) */
  MACE_UNARY_CELU = 1,             /* max(0, x) + min(0, alpha (e^(x/alpha) - 1)) */
  MACE_UNARY_THRESHOLDED_RELU = 2, /* x > alpha ? x : 0 */
  MACE_UNARY_SHRINK = 3,           /* x < -lambd ? x + bias : x > lambd ? x - bias : 0 */
  MACE_UNARY_SWISH = 4,            /* x sigmoid(alpha x) */
  MACE_UNARY_TAN = 5,
  MACE_UNARY_ASIN = 6,
  MACE_UNARY_ACOS = 7,
  MACE_UNARY_ATAN = 8,
  MACE_UNARY_SINH = 9,
  MACE_UNARY_COSH = 10,
  MACE_UNARY_ASINH = 11,
  MACE_UNARY_ACOSH = 12,
  MACE_UNARY_ATANH = 13
} mace_unary_math_type;

typedef struct mace_unary_math_params {
  float alpha, gamma, bias, lambd;
} mace_unary_math_params;

/* out[i] = f(in[i]) for i in [begin, end). */
void mace_f32_unary_math__ref(mace_unary_math_type type, const mace_unary_math_params *p,
                              const float *in, float *out, int64_t begin, int64_t end);

#endif /* MACE_KERNELS_CPU_REF_UNARY_MATH_H_ */
