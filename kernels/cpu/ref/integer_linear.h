/* Reference (portable C) ONNX ConvInteger and MatMulInteger: u8/i8 operands minus their zero
 * points, exact int32 sums (no requantization; the outputs are int32). */
#ifndef MACE_KERNELS_CPU_REF_INTEGER_LINEAR_H_
#define MACE_KERNELS_CPU_REF_INTEGER_LINEAR_H_

#include <stdint.h>

/* An int8 or uint8 operand: its data, signedness, and zero point(s) (zp_n = 1: one value;
 * otherwise one per output channel / row / column; zp NULL: 0), all borrowed. */
typedef struct mace_q8_operand {
  const void *data;
  int is_s8;
  const void *zp;
  int64_t zp_n;
} mace_q8_operand;

/* Geometry of a 2-D NCHW ConvInteger (W is [out_c, in_c / group, k_h, k_w]). Padding
 * positions contribute 0 (as (x - x_zp) of a padded zero-point value). */
typedef struct mace_conv_integer_shape {
  int64_t batch, in_c, in_h, in_w, out_c, out_h, out_w, k_h, k_w;
  int64_t stride_h, stride_w, dilation_h, dilation_w, pad_top, pad_left, group;
} mace_conv_integer_shape;

/* y[n, m, oh, ow] = sum over the window of (x - x_zp) * (w[m] - w_zp[m]); output planes
 * [begin, end) of batch * out_c. */
void mace_q8_conv_integer__ref(const mace_conv_integer_shape *s, const mace_q8_operand *x,
                               const mace_q8_operand *w, int32_t *y, int64_t begin, int64_t end);

/* One [M, K] x [K, N] product: y[m, n] = sum_k (a[m, k] - a_zp[m]) * (b[k, n] - b_zp[n])
 * (a_zp per row when a->zp_n == M, b_zp per column when b->zp_n == N), a and b at element
 * offsets a_off and b_off; rows [begin, end) of y. */
void mace_q8_matmul_integer__ref(const mace_q8_operand *a, int64_t a_off,
                                 const mace_q8_operand *b, int64_t b_off, int64_t m, int64_t k,
                                 int64_t n, int32_t *y, int64_t begin, int64_t end);

#endif /* MACE_KERNELS_CPU_REF_INTEGER_LINEAR_H_ */
