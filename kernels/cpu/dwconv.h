/* f32 depthwise KxK convolution (K <= 7, stride 1 or 2) on NCHW: SIMD kernels per ISA. */
#ifndef MACE_KERNELS_CPU_DWCONV_H_
#define MACE_KERNELS_CPU_DWCONV_H_

#include <stdint.h>

#include "kernels/cpu/ref/conv2d.h"

/* What the kernels take: group == in_c == out_c, a square KxK filter with 1 <= K <= 7,
 * stride_h == stride_w in {1, 2}, dilation 1, any padding, any size. */
static inline int mace_f32_dwconv_applies(const mace_conv2d_shape *s) {
  return s->group == s->in_c && s->out_c == s->in_c && s->k_h == s->k_w && s->k_h >= 1 &&
         s->k_h <= 7 && s->stride_h == s->stride_w && (s->stride_w == 1 || s->stride_w == 2) &&
         s->dilation_h == 1 && s->dilation_w == 1;
}

/* Computes output planes [begin, end) of the window [0, batch * channels) (plane n * C + c),
 * + bias[c] (bias may be NULL), then act (may be NULL). Same result as mace_f32_conv2d__ref up
 * to rounding (FMA, another summation order). NONE, RELU, RELUX and LEAKYRELU are applied in
 * registers, other kinds by the vector activation on each finished plane. No allocation (about
 * 35 KB of stack). */
typedef void mace_f32_dwconv_ukernel(const mace_conv2d_shape *s, const float *input,
                                     const float *filter, const float *bias,
                                     const mace_activation *act, float *output, int64_t begin,
                                     int64_t end);
typedef mace_f32_dwconv_ukernel *mace_f32_dwconv_fn;

#endif /* MACE_KERNELS_CPU_DWCONV_H_ */
