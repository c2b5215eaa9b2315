/* Reference (portable C) element-wise activations, f32. */
#ifndef MACE_KERNELS_CPU_REF_ACTIVATION_H_
#define MACE_KERNELS_CPU_REF_ACTIVATION_H_

#include <stdint.h>

typedef enum mace_activation_kind {
  MACE_ACT_NONE = 0,
  MACE_ACT_RELU,
  MACE_ACT_RELUX,       /* min(max(x, 0), beta) */
  MACE_ACT_LEAKYRELU,   /* x >= 0 ? x : alpha * x */
  MACE_ACT_SIGMOID,
  MACE_ACT_TANH,
  MACE_ACT_HARDSIGMOID, /* max(0, min(1, alpha * x + beta)) */
  MACE_ACT_HARDSWISH,   /* x * hardsigmoid(x) with alpha = 1/6, beta = 0.5 */
  MACE_ACT_ELU,         /* x >= 0 ? x : alpha * (exp(x) - 1) */
  MACE_ACT_SWISH,       /* x * sigmoid(alpha * x) (SiLU at alpha = 1) */
  MACE_ACT_GELU,        /* x * (1 + erf(x / sqrt(2))) / 2 */
  MACE_ACT_GELU_TANH,   /* x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 x^3))) / 2 */
  MACE_ACT_MISH         /* x * tanh(softplus(x)), softplus(x) = log(1 + exp(x)) */
} mace_activation_kind;

typedef struct mace_activation {
  mace_activation_kind kind;
  float alpha;
  float beta;
} mace_activation;

/* out[i] = act(in[i]) for i in [0, n); in == out allowed. */
void mace_f32_activation__ref(const mace_activation *act, const float *in, float *out,
                              int64_t n);

#endif /* MACE_KERNELS_CPU_REF_ACTIVATION_H_ */
