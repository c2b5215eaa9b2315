/* MACE Micro ops: each op's const parameter struct (filled by the converter) and kernel. */
#ifndef MACE_MICRO_OPS_H_
#define MACE_MICRO_OPS_H_

#include "mace_micro.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Activation applied by an op to each value it writes (f32). Formulas as the full engine's
 * kernels/cpu/ref/activation.h. */
typedef enum mace_micro_act_kind {
  MACE_MICRO_ACT_NONE = 0,
  MACE_MICRO_ACT_RELU,        /* max(x, 0) */
  MACE_MICRO_ACT_RELUX,       /* min(max(x, 0), beta) (relu6: beta = 6) */
  MACE_MICRO_ACT_LEAKYRELU,   /* x >= 0 ? x : alpha * x */
  MACE_MICRO_ACT_SIGMOID,
  MACE_MICRO_ACT_TANH,
  MACE_MICRO_ACT_HARDSIGMOID, /* max(0, min(1, alpha * x + beta)) */
  MACE_MICRO_ACT_HARDSWISH,   /* x * hardsigmoid(x) with alpha = 1/6, beta = 0.5 */
  MACE_MICRO_ACT_ELU          /* x >= 0 ? x : alpha * (exp(x) - 1) */
} mace_micro_act_kind;

typedef struct mace_micro_act mace_micro_act;

/* An activation that needs libm (SIGMOID, TANH, ELU) or more than a clamp: the generated code
 * names the function, so a model that uses none of them links no libm for activations. */
typedef float (*mace_micro_act_fn)(const mace_micro_act *act, float x);

struct mace_micro_act {
  int32_t kind; /* mace_micro_act_kind */
  float alpha, beta;
  mace_micro_act_fn fn; /* kinds other than NONE, RELU, RELUX: mace_micro_act_<kind> */
};

float mace_micro_act_leakyrelu(const mace_micro_act *act, float x);
float mace_micro_act_sigmoid(const mace_micro_act *act, float x);
float mace_micro_act_tanh(const mace_micro_act *act, float x);
float mace_micro_act_hardsigmoid(const mace_micro_act *act, float x);
float mace_micro_act_hardswish(const mace_micro_act *act, float x);
float mace_micro_act_elu(const mace_micro_act *act, float x);

/* Sliding-window geometry on NCHW (conv and pooling); pads are explicit (resolved at
 * conversion) and the output size is the converter's. */
typedef struct mace_micro_window {
  int32_t batch, in_c, in_h, in_w, out_c, out_h, out_w;
  int32_t k_h, k_w, stride_h, stride_w, dil_h, dil_w;
  int32_t pad_t, pad_l, pad_b, pad_r;
  int32_t group; /* conv: C_in and C_out divisible by it; pooling: 1 */
} mace_micro_window;

/* Conv2D / DepthwiseConv2D f32: y = act(conv(x, w) + bias [+ residual]); w [out_c, in_c / group,
 * kH, kW]; the op's second input, when given, is a residual of y's shape (a fused Add). */
typedef struct mace_micro_conv2d {
  mace_micro_window g;
  const float *w;
  const float *bias; /* [out_c] or NULL */
  mace_micro_act act;
} mace_micro_conv2d;

/* FullyConnected f32: y[b, n] = act(bias[n] + sum_k x[b, k] * w[n, k]). */
typedef struct mace_micro_fc {
  int32_t batch, k, n;
  const float *w;    /* [n, k] */
  const float *bias; /* [n] or NULL */
  mace_micro_act act;
} mace_micro_fc;

/* Pooling f32 (MAX, AVG) and i8 (MAX); AVG divides by the taps inside the input, or by those
 * inside the padded input with count_include_pad. */
typedef struct mace_micro_pool {
  mace_micro_window g; /* in_c = out_c = channels */
  int32_t is_max, count_include_pad;
} mace_micro_pool;

/* Activation op: y[i] = act(x[i]), i < n. */
typedef struct mace_micro_activation {
  int32_t n;
  mace_micro_act act;
} mace_micro_activation;

/* Softmax along an axis of `len` values with `inner` elements between them. */
typedef struct mace_micro_softmax {
  int32_t outer, len, inner;
} mace_micro_softmax;

typedef enum mace_micro_eltwise_type {
  MACE_MICRO_ELTWISE_ADD = 0,
  MACE_MICRO_ELTWISE_SUB,
  MACE_MICRO_ELTWISE_PROD,
  MACE_MICRO_ELTWISE_MIN,
  MACE_MICRO_ELTWISE_MAX
} mace_micro_eltwise_type;

/* Binary element-wise f32 with NumPy broadcasting over 4 dims (strides 0 where broadcast). */
typedef struct mace_micro_eltwise {
  int32_t type; /* mace_micro_eltwise_type */
  int32_t dims[4];
  int32_t a_strides[4], b_strides[4];
  mace_micro_act act;
} mace_micro_eltwise;

/* Copy of `bytes` bytes (a reshape that cannot alias: into an output or out of an input). */
typedef struct mace_micro_copy {
  int32_t bytes;
} mace_micro_copy;

/* Quantize f32 -> i8: y = clamp(rint(x / scale) + zp, -128, 127) (ONNX QuantizeLinear). */
typedef struct mace_micro_quantize {
  int32_t n;
  float scale;
  int32_t zp;
} mace_micro_quantize;

/* Dequantize i8 -> f32: y = (x - zp) * scale. */
typedef struct mace_micro_dequantize {
  int32_t n;
  float scale;
  int32_t zp;
} mace_micro_dequantize;

/* The requantization of int8 ops (docs/int8.md): acc -> clamp(requant(acc) + y_zp, lo, hi),
 * per output channel mult[c] / shift[c] (kernels/cpu/ref/requant.h). */
typedef struct mace_micro_requant {
  const int32_t *mult, *shift; /* [channels] */
  int32_t y_zp, lo, hi;
} mace_micro_requant;

/* QLinearConv2D i8 (grouped or depthwise): acc[c] = bias[c] + sum w * (x - x_zp), w symmetric
 * per output channel, padding contributes x_zp (nothing). */
typedef struct mace_micro_qconv2d {
  mace_micro_window g;
  const int8_t *w;      /* [out_c, in_c / group, kH, kW] */
  const int32_t *bias;  /* [out_c] or NULL */
  int32_t x_zp;
  mace_micro_requant rq;
} mace_micro_qconv2d;

/* QLinearMatMul with a constant B as a fully connected i8 layer: w [n, k] (B transposed). */
typedef struct mace_micro_qfc {
  int32_t batch, k, n;
  const int8_t *w;
  const int32_t *bias; /* [n] or NULL */
  int32_t x_zp;
  mace_micro_requant rq;
} mace_micro_qfc;

/* QLinearAveragePool i8 where every window has `count` taps (the converter checks it):
 * y = requant(sum(x - x_zp)) with M = x_scale / (y_scale * count). */
typedef struct mace_micro_qavgpool {
  mace_micro_window g;
  int32_t count_include_pad, x_zp;
  int32_t mult, shift, y_zp;
} mace_micro_qavgpool;

/* QLinearAdd i8 with broadcasting over 4 dims, the full engine's formula
 * (kernels/cpu/ref/qlinear_eltwise.h): the narrow form (m16_a * a + m16_b * b + bias) >> s16
 * where s16 > 0, else the wide one, each input's (q - zp) << 20 brought onto the common scale
 * 2 * max(a_scale, b_scale), the sum requantized; lo/hi narrowed by a fused RELU. */
typedef struct mace_micro_qadd {
  int32_t dims[4];
  int32_t a_strides[4], b_strides[4];
  int32_t a_zp, b_zp, y_zp, lo, hi;
  int32_t a_mult, a_shift, b_mult, b_shift, y_mult, y_shift;
  int32_t m16_a, m16_b, s16;
} mace_micro_qadd;

/* Every kernel, from the one op list. */
#define MACE_MICRO_OP(name)                                                               \
  mace_micro_status mace_micro_op_##name(const void *params, const void *x0, const void *x1, \
                                         void *y);
#include "../ops/manifest.inc"
#undef MACE_MICRO_OP

#ifdef __cplusplus
}
#endif

#endif /* MACE_MICRO_OPS_H_ */
